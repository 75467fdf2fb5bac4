// The official OpenAI Node client against gangway serve: a streaming chat completion (with
// usage), a plain completion, the model list, and an error the client must surface as an
// APIError. Usage: node streaming_chat.mjs http://127.0.0.1:PORT
import assert from "node:assert/strict";
import OpenAI from "openai";

const base = process.argv[2];
assert.ok(base, "usage: node streaming_chat.mjs http://HOST:PORT");
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: "not-needed", maxRetries: 0 });

const models = await client.models.list();
const ids = models.data.map((m) => m.id);
assert.ok(ids.includes("llama-3-8b"), `models: ${ids}`);

const stream = await client.chat.completions.create({
  model: "llama-3-8b",
  messages: [
    { role: "system", content: "You are terse." },
    { role: "user", content: "Say something about GPUs." },
  ],
  max_tokens: 12,
  stream: true,
  stream_options: { include_usage: true },
  // gangway's extensions ride along in the body.
  slo_class: "interactive",
  ignore_eos: true,
});
let content = "";
let contentChunks = 0;
let finishReason = null;
let usage = null;
for await (const chunk of stream) {
  assert.equal(chunk.object, "chat.completion.chunk");
  if (chunk.usage) usage = chunk.usage;
  for (const choice of chunk.choices) {
    if (choice.delta?.content) {
      content += choice.delta.content;
      contentChunks += 1;
    }
    if (choice.finish_reason) finishReason = choice.finish_reason;
  }
}
assert.equal(contentChunks, 12, "one content chunk per token");
assert.equal(content.length, 48, "4 bytes per emulated token");
assert.equal(finishReason, "length");
assert.ok(usage, "usage chunk with stream_options.include_usage");
assert.equal(usage.completion_tokens, 12);
assert.ok(usage.prompt_tokens > 0);
assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);

const completion = await client.completions.create({
  model: "llama-3-8b",
  prompt: "Once upon a time",
  max_tokens: 5,
  ignore_eos: true,
});
assert.equal(completion.choices[0].text.length, 20);
assert.equal(completion.usage.prompt_tokens, 4);

await assert.rejects(
  client.chat.completions.create({ model: "no-such-model", messages: [{ role: "user", content: "x" }] }),
  (error) => error instanceof OpenAI.APIError && error.status === 404 && error.code === "model_not_found",
);

console.log(`openai-node ok: streamed ${contentChunks} chunks, usage ${JSON.stringify(usage)}`);
