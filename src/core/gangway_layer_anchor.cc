// Every layer library links this empty translation unit so that a layer whose folder has no
// sources yet is still a valid static library.
