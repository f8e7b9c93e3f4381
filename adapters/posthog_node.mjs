// The conformance kit's adapter for the analytics vendor's Node SDK (`posthog-node`), which calls
// the stub's legacy vendor routes (`/flags`, `/batch`): it declares the vendor plane, so the kit
// runs its `vendor` cases. It does what adapters/posthog_python.py does, in JavaScript, with the
// adapter protocol's HTTP side (adapters/protocol_server.py there) written out here.
//
//     npm install --prefix adapters        # posthog-node, as adapters/package.json pins it
//     node adapters/posthog_node.mjs [--port 0]
//     # prints: adapter listening on http://127.0.0.1:PORT

import { readFileSync } from "node:fs";
import http from "node:http";
import { PostHog } from "posthog-node";

const posthogVersion = (() => {
  // The package's exports do not include its package.json: find it next to the entry point.
  let directory = new URL(".", import.meta.resolve("posthog-node"));
  for (;;) {
    const candidate = new URL("package.json", directory);
    try {
      const document = JSON.parse(readFileSync(candidate, "utf8"));
      if (document.name === "posthog-node") return document.version;
    } catch {
      // not this directory
    }
    const parent = new URL("..", directory);
    if (parent.href === directory.href) return "unknown";
    directory = parent;
  }
})();

const INFO = {
  protocol: 1,
  name: `posthog-node ${posthogVersion} (Node)`,
  language: "node",
  plane: "vendor",
  capabilities: ["evaluate", "signals", "shutdown"],
  expectedFailures: {},
};

function create(body) {
  const timeoutMs = Number(body.options?.timeoutMs ?? 3000);
  return new PostHog(body.apiKey ?? "", {
    host: body.apiUrl, // kept as given: the SDK appends `/flags/?v=2` and `/batch/` to it
    flushAt: 1, // every capture is sent at once (and `signal` awaits the flush)
    flushInterval: 0,
    requestTimeout: timeoutMs,
    featureFlagsRequestTimeoutMs: timeoutMs,
    fetchRetryCount: 0, // no retries: neither of a capture batch...
    featureFlagsRequestMaxRetries: 0, // ...nor of a /flags call
    sendFeatureFlagEvent: false, // a read sends no `$feature_flag_called` event
  });
}

async function evaluate(client, body) {
  // A remote read of one flag (the SDK's answer is the flag's variant, or true/false).
  const { targetingKey, ...personProperties } = body.context ?? {};
  const flags = await client.evaluateFlags(targetingKey || "anonymous", {
    personProperties,
    flagKeys: [body.flagKey],
  });
  const value = flags.getFlag(body.flagKey, { sendFeatureFlagEvents: false });
  if (value === undefined || value === null) {
    return { value: body.default ?? null, variant: null, reason: "DEFAULT", errorKind: null };
  }
  return {
    value,
    variant: typeof value === "string" ? value : null,
    reason: null,
    errorKind: null,
  };
}

async function signal(client, body) {
  // The vendor's analytics event, named as the signal (sent before the answer: flushed).
  client.capture({ distinctId: "conformance-kit", event: body.name });
  await client.flush();
  return { ok: true };
}

async function shutdown(client) {
  await client.shutdown();
  return { ok: true };
}

const COMMANDS = { evaluate, signal, shutdown };

// The adapter protocol (version 1), as adapters/protocol_server.py serves it.

const clients = new Map();
let nextId = 1;

function raised(error) {
  const type = error?.name ?? error?.constructor?.name ?? typeof error;
  const message = error?.message ?? String(error);
  return { raised: `${type}: ${message}` };
}

function createClient(body) {
  let client;
  try {
    client = create(body);
  } catch (error) {
    // the library refused to make a client
    return { error: { kind: "Configuration", message: String(error?.message ?? error) } };
  }
  const id = String(nextId++);
  clients.set(id, client);
  return { id };
}

async function command(clientId, body) {
  // What the library returned; null for a client that does not exist.
  const client = clients.get(clientId);
  if (client === undefined) return null;
  const name = body.command ?? "";
  const run = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (run === undefined) {
    const shown = typeof body.command === "string" ? `'${body.command}'` : "None";
    return { raised: `UnsupportedCommand: ${shown}` };
  }
  try {
    return await run(client, body);
  } catch (error) {
    // the protocol reports a throw; it must not crash the adapter
    return raised(error);
  }
}

function answer(response, body, status = 200) {
  const encoded = Buffer.from(JSON.stringify(body));
  response.writeHead(status, {
    "Content-Type": "application/json",
    "Content-Length": encoded.length,
  });
  response.end(encoded);
}

function readBody(request) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

function clientIdOf(path) {
  return decodeURIComponent(path.startsWith("/clients/") ? path.slice("/clients/".length) : path);
}

async function handle(request, response) {
  const path = request.url ?? "/";
  if (request.method === "GET") {
    answer(response, INFO);
    return;
  }
  if (request.method === "DELETE") {
    clients.delete(clientIdOf(path));
    answer(response, {});
    return;
  }
  if (request.method !== "POST") {
    answer(response, { error: `method ${request.method} not allowed` }, 405);
    return;
  }
  let body;
  try {
    body = JSON.parse((await readBody(request)) || "{}");
  } catch {
    answer(response, { error: "the request body is not JSON" }, 400);
    return;
  }
  if (path === "/clients") {
    answer(response, createClient(body));
    return;
  }
  const result = await command(clientIdOf(path), body);
  if (result === null) {
    answer(response, { error: `no client ${path}` }, 404);
  } else {
    answer(response, result);
  }
}

function parsePort(argv) {
  const index = argv.indexOf("--port");
  const given = index === -1 ? argv.find((arg) => arg.startsWith("--port=")) : argv[index + 1];
  const text = index === -1 ? given?.slice("--port=".length) : given;
  if (text === undefined) return 0;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`posthog_node.mjs: --port: not a port: ${text}\n`);
    process.exit(2);
  }
  return port;
}

const server = http.createServer((request, response) => {
  handle(request, response).catch((error) => {
    if (!response.headersSent) answer(response, { error: raised(error).raised }, 500);
    else response.destroy();
  });
});
server.listen(parsePort(process.argv.slice(2)), "127.0.0.1", () => {
  process.stdout.write(`adapter listening on http://127.0.0.1:${server.address().port}\n`);
});
for (const signalName of ["SIGINT", "SIGTERM"]) {
  process.on(signalName, () => process.exit(0));
}
