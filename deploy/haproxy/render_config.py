#!/usr/bin/python3
"""Writes an HAProxy 2.6 configuration for N gangway serve nodes (docs/cluster.md).

    deploy/haproxy/render_config.py --node 10.0.0.11:8000:9100 --node 10.0.0.12:8000:9100 \\
        --node 10.0.0.13:8000:9100 > /etc/haproxy/haproxy.cfg
    haproxy -c -f /etc/haproxy/haproxy.cfg

Each --node is HOST:PORT:AGENT_PORT (the node's server.port and server.agent_port); give 2 to 64.
deploy/haproxy/haproxy.cfg is this script's output for the three nodes above (EXAMPLE_NODES),
and a test keeps it so. The other options exist for tests and experiments (loopback clusters):
shorter check intervals, a plain round-robin balancer without agent checks, a tenant pinned to a
node, logs on stderr.
"""

import argparse
import sys

# The nodes of the shipped deploy/haproxy/haproxy.cfg.
EXAMPLE_NODES = [("10.0.0.11", 8000, 9100), ("10.0.0.12", 8000, 9100), ("10.0.0.13", 8000, 9100)]

HEADER = """\
# HAProxy 2.6 (Debian 12's haproxy package) in front of {count} gangway serve nodes.
# Written by deploy/haproxy/render_config.py; docs/cluster.md explains every setting and what an
# operator sees when a node is hot, draining or dead. Check it with: haproxy -c -f FILE
"""

GLOBAL = """\
global
    log {log}
    # Client and node connections together; HAProxy raises its descriptor limit to about twice
    # this at start (as root), so the machine's hard limit must allow it.
    maxconn {maxconn}
    # A request is sent again to another node (retry-on below) only if it fits in one buffer:
    # 64 KiB holds a prompt of about 15,000 tokens. Larger requests are never retried: their 503
    # reaches the client, which may retry it.
    tune.bufsize 65536
{stats_socket}
defaults
    mode http
    log global
    option httplog
    option dontlognull
    # Requests that arrive whole within 15 s (as gangway's own read_timeout_s), kept-alive
    # client connections idle at most 15 s.
    timeout http-request 15s
    timeout http-keep-alive 15s
    timeout connect 1s
    # Inactivity limits, not request limits: a streamed answer sends a token every few tens of
    # ms, but a queued request sends nothing until its first token, and a batch-class request
    # may queue for minutes under load.
    timeout client 10m
    timeout server 10m
    # A client that goes away while its request waits for a node is not sent on.
    option abortonclose
    # Every token is forwarded the moment it arrives. By default HAProxy asks the kernel to hold
    # small writes for more data (MSG_MORE), and a streamed answer's first event, a few hundred
    # bytes, then waits about 200 ms on each hop: a tenth of an interactive TTFT target.
    option http-no-delay

frontend gangway
    bind {bind}
    default_backend gangway_nodes

backend gangway_nodes
{balance}
    # Readiness: 200 while the node takes requests, 503 from the first SIGTERM on (drain).
    option httpchk GET /ready
    http-check expect status 200
    timeout check 2s
    # Sent to another node: a request a node turns away with 503 (queue_full,
    # deadline_unmeetable, shed, no_capacity, draining, engine_failed, driver_stopped,
    # too_many_connections: before its first token) or 500 (internal_error: the node failed on
    # it and did not run it), one whose connection failed, and one whose node closed it without
    # a byte of answer (a node that died): gangway's "retry elsewhere" answers. Never retried:
    # 4xx answers (400 bad request, 404, 408, 413, 429 rate limited: "retry here later"), 501,
    # 504 deadline_expired, and every answer whose status line went out: a stream that started
    # is never sent twice.
    retry-on conn-failure empty-response 500 503
    retries {retries}
    # Every retry goes to another node than the one that just turned the request away.
    option redispatch 1
{pins}\
    # Health check on /ready every {check}, down after 2 failures, up after 2 passes; three
    # refused or failed connections from live traffic mark a node down at once (a dead node).
    default-server check inter {check} fall 2 rise 2 observe layer4 error-limit 3 on-error mark-down{agent}
{servers}
frontend stats
    bind {stats_bind}
    # The status page (a node's weight, state and check result per line) and Prometheus metrics.
    stats enable
    stats uri /stats
    stats refresh 5s
    http-request use-service prometheus-exporter if {{ path /metrics }}
"""

BALANCE_AGENT = """\
    # Weighted round robin: each node's share of new requests is its weight over the sum. Every
    # node starts at weight 100, and its agent check (asked every {agent_interval}) answers the
    # percentage of it the node can take, or drain, or down."""
BALANCE_PLAIN = """\
    # Plain round robin: equal shares whatever the nodes' load (no agent check)."""

AGENT = " weight 100 agent-check agent-inter {agent_interval}"


def parse_node(text):
    parts = text.rsplit(":", 2)
    if len(parts) != 3 or not parts[0]:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT:AGENT_PORT, got '{text}'")
    host, port, agent = parts
    for name, value in (("port", port), ("agent port", agent)):
        if not value.isdigit() or not 1 <= int(value) <= 65535:
            raise argparse.ArgumentTypeError(
                f"{name} in '{text}': expected a whole number from 1 to 65535")
    if port == agent:
        raise argparse.ArgumentTypeError(
            f"'{text}': the agent port must differ from the HTTP port")
    return host, int(port), int(agent)


def parse_pin(text):
    tenant, _, node = text.partition("=")
    if not tenant or not node.isdigit() or int(node) < 1:
        raise argparse.ArgumentTypeError(f"expected TENANT=NODE_NUMBER (1 = the first), got '{text}'")
    return tenant, int(node)


def render(nodes, bind="0.0.0.0:8080", stats_bind="127.0.0.1:8404", check="1s",
           agent_interval="250ms", agent=True, retries=3, pins=(),
           stats_socket="/run/haproxy/admin.sock", log="/dev/log local0", maxconn=20000):
    if not 2 <= len(nodes) <= 64:
        raise ValueError(f"expected 2 to 64 nodes, got {len(nodes)}")
    seen = set()
    for host, port, agent_port in nodes:
        for endpoint in ((host, port), (host, agent_port)):
            if endpoint in seen:
                raise ValueError(f"{endpoint[0]}:{endpoint[1]} is given twice")
            seen.add(endpoint)
    servers = []
    for index, (host, port, agent_port) in enumerate(nodes, start=1):
        line = f"    server node{index} {host}:{port}"
        if agent:
            line += f" agent-port {agent_port}"
        servers.append(line)
    pin_lines = ""
    for tenant, node in pins:
        if node > len(nodes):
            raise ValueError(f"tenant {tenant} is pinned to node {node} of {len(nodes)}")
        pin_lines += (f"    # Tenant {tenant} goes to node{node} first (its 503s still go elsewhere).\n"
                      f"    use-server node{node} if {{ req.hdr(x-gangway-tenant) -m str {tenant} }}\n")
    socket = (f"    stats socket {stats_socket} mode 660 level admin\n" if stats_socket else "")
    return HEADER.format(count=len(nodes)) + "\n" + GLOBAL.format(
        log=log, maxconn=maxconn, stats_socket=socket, bind=bind,
        balance="    balance roundrobin\n" + (
            BALANCE_AGENT.format(agent_interval=agent_interval) if agent else BALANCE_PLAIN),
        retries=retries, pins=pin_lines, check=check,
        agent=AGENT.format(agent_interval=agent_interval) if agent else "",
        servers="\n".join(servers) + "\n", stats_bind=stats_bind)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--node", action="append", type=parse_node, required=True,
                        metavar="HOST:PORT:AGENT_PORT", help="a gangway serve node (2 to 64)")
    parser.add_argument("--bind", default="0.0.0.0:8080", help="where clients connect")
    parser.add_argument("--stats-bind", default="127.0.0.1:8404",
                        help="the status page and Prometheus metrics")
    parser.add_argument("--stats-socket", default="/run/haproxy/admin.sock",
                        help="HAProxy's command socket ('' for none)")
    parser.add_argument("--check-interval", default="1s", help="health check interval")
    parser.add_argument("--agent-interval", default="250ms", help="agent check interval")
    parser.add_argument("--retries", type=int, default=3,
                        help="attempts after the first, each on another node")
    parser.add_argument("--no-agent", action="store_true",
                        help="plain round robin without agent checks (for comparisons)")
    parser.add_argument("--pin", action="append", type=parse_pin, default=[],
                        metavar="TENANT=NODE", help="send a tenant to one node first")
    parser.add_argument("--maxconn", type=int, default=20000,
                        help="most connections HAProxy holds (clients and nodes)")
    parser.add_argument("--log", default="/dev/log local0",
                        help="HAProxy's log target, e.g. 'stderr format raw local0'")
    args = parser.parse_args()
    try:
        text = render(args.node, args.bind, args.stats_bind, args.check_interval,
                      args.agent_interval, not args.no_agent, args.retries, args.pin,
                      args.stats_socket, args.log, args.maxconn)
    except ValueError as error:
        print(f"render_config.py: error: {error}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
