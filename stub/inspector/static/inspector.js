// The svc-stub inspector: draws one namespace's journal, recordings, faults, served state and
// coverage, live from /_test/ui/feed (a long-poll), or once from the data a snapshot file carries.
// No framework and no build step: the stub serves this file as it is.
"use strict";

const MAX_ROWS_KEPT = 10000;   // a page never holds more requests than a journal keeps
const MAX_ROWS_DRAWN = 500;    // the newest that match the filters; the rest are counted
const WAIT_MS = 25000;
const TOKEN_KEY = "svc-stub-control-token";

const page = {
  live: true,
  paused: false,
  cursor: "",
  requests: [],          // summaries, newest first
  recorded: { events: [], svcEvents: [], targets: [] },
  state: {},             // the last view's faults, flags, management, namespaces
  held: [],              // views that arrived while paused, taken on resume
  open: null,            // the seq shown in detail
  details: new Map(),    // seq -> the request in full (a snapshot carries them all)
  cell: null,            // the coverage cell last clicked: { route, outcome, count }
};

// ---- small DOM helpers: every value from a client goes in as text, never as markup

function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const $ = (id) => document.getElementById(id);

function table(headings, rows) {
  return h("table", {},
    h("thead", {}, h("tr", {}, headings.map((t) => h("th", {}, t)))),
    h("tbody", {}, rows.map((cells) => h("tr", {}, cells.map((c) => h("td", {}, c))))));
}

function json(value) {
  return value === undefined ? "" : JSON.stringify(value);
}

function pretty(body) {
  // A body as the stub kept it: JSON pretty-printed, anything else as it was; never cut.
  if (!body) return "(none)";
  if (body.base64 !== undefined) return `(${body.bytes} bytes, not UTF-8; base64)\n${body.base64}`;
  try {
    return JSON.stringify(JSON.parse(body.text), null, 2);
  } catch (_) {
    return body.text;
  }
}

// ---- talking to the stub

function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

async function call(path, options = {}) {
  const headers = Object.assign({}, options.headers);
  if (token()) headers.Authorization = `Bearer ${token()}`;
  const answer = await fetch(path, Object.assign({ cache: "no-store" }, options, { headers }));
  if (answer.status === 401) {
    askForToken();
    throw new Error("the control token is needed");
  }
  const body = await answer.json().catch(() => ({}));
  if (!answer.ok) throw Object.assign(new Error(body.message || `HTTP ${answer.status}`), { status: answer.status });
  return body;
}

function askForToken() {
  sessionStorage.removeItem(TOKEN_KEY);
  $("token-form").hidden = false;
  setStatus("needs the control token");
}

async function follow() {
  // Long-polls the feed; each answer carries what is new since the cursor it was sent.
  for (;;) {
    if (!$("token-form").hidden || (page.paused && heldCount() >= MAX_ROWS_KEPT)) {
      await new Promise((resolve) => setTimeout(resolve, 250));  // the stub counts what is skipped
      continue;
    }
    try {
      const since = encodeURIComponent(page.cursor);
      const shown = await call(`ui/feed?since=${since}&waitMs=${page.cursor ? WAIT_MS : 0}`);
      if (page.paused) {
        page.held.push(shown);
        page.cursor = shown.cursor;  // held, but seen: the next look asks for what is newer
      } else {
        take(shown);
      }
      setStatus(page.paused ? `paused (${heldCount()} new)` : "live");
    } catch (error) {
      // 404: not made yet, or deleted; 410: gone. Either may come (back): keep looking.
      const waiting = error.status === 404 || error.status === 410;
      setStatus(waiting ? `${error.message}; waiting for it` : `disconnected: ${error.message}; retrying`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

function heldCount() {
  return page.held.reduce((sum, shown) => sum + shown.requests.length, 0);
}

function setStatus(text) {
  $("status").textContent = text;
}

// ---- taking a view (the feed's answer, or a snapshot's whole)

function take(shown) {
  if (shown.fresh) {
    page.requests = [];
    page.recorded = { events: [], svcEvents: [], targets: [] };
    page.open = null;
    $("detail").hidden = true;
  }
  page.cursor = shown.cursor;
  for (const entry of shown.requests) {
    if (entry.body !== undefined) page.details.set(entry.seq, entry);
    page.requests.unshift(entry);
  }
  page.requests.length = Math.min(page.requests.length, MAX_ROWS_KEPT);
  for (const name of Object.keys(page.recorded)) {
    page.recorded[name] = page.recorded[name].concat(shown.recorded[name]).slice(-MAX_ROWS_KEPT);
  }
  const kept = page.state.flags;
  page.state = shown;
  if (shown.flags === undefined) page.state.flags = kept;
  draw();
}

// ---- drawing

function draw() {
  const shown = page.state;
  $("namespace").textContent = shown.namespace === "default" ? "" : `· ${shown.namespace}`;
  document.title = `svc-stub inspector${shown.namespace === "default" ? "" : " · " + shown.namespace}`;
  drawRequests();
  drawRecorded();
  drawFaults();
  drawServed();
  drawCoverage();
  drawNamespaces();
}

function started(entry) {
  const at = new Date(page.state.startedAt + entry.arrivedMs);
  return at.toLocaleTimeString([], { hour12: false }) + "." + String(at.getMilliseconds()).padStart(3, "0");
}

function faultText(fault) {
  if (!fault) return "";
  const why = fault.source === "armed" ? `armed #${fault.armedId}` : fault.source;
  const step = fault.step === undefined ? "" : `, step ${fault.step + 1}`;
  return `${fault.mode} (${why}${step})`;
}

function statusClass(entry) {
  return entry.status === null ? "none" : `${String(entry.status)[0]}xx`;
}

function rowText(entry) {
  return [entry.method, entry.path, json(entry.query), entry.route || "unknown", entry.status,
    faultText(entry.fault), entry.warning, entry.unmatched, json(entry.headers),
    entry.upstream ? `upstream ${entry.upstream.status}` : ""].join(" ").toLowerCase();
}

function matches(entry) {
  const route = $("filter-route").value;
  const status = $("filter-status").value;
  const fault = $("filter-fault").value;
  const outcome = $("filter-outcome").value;
  const text = $("filter-text").value.trim().toLowerCase();
  if (route && (route === "unknown" ? entry.route !== null : entry.route !== route)) return false;
  if (status && statusClass(entry) !== status) return false;
  if (fault === "none" && entry.fault) return false;
  if (fault === "fired" && !entry.fault) return false;
  if (fault && fault !== "none" && fault !== "fired" && (!entry.fault || entry.fault.mode !== fault)) return false;
  if (outcome && entry.outcome !== outcome) return false;
  return !text || rowText(entry).includes(text);
}

function drawRequests() {
  // A clicked coverage cell's route and outcome stay choosable when the journal keeps none of
  // its requests any more (the counts outlive a reset and the journal's bound).
  const routes = new Set(page.requests.map((r) => r.route || "unknown"));
  const outcomes = new Set(page.requests.map((r) => r.outcome).filter(Boolean));
  if (page.cell) {
    routes.add(page.cell.route);
    outcomes.add(page.cell.outcome);
  }
  fillSelect($("filter-route"), [...routes].sort(), "any");
  fillSelect($("filter-outcome"), [...outcomes].sort(byOutcome), "any");
  const modes = (page.state.faultModes || []).map((m) => [m, m]);
  fillSelect($("filter-fault"), modes, null, [["", "any"], ["none", "none fired"], ["fired", "any fired"]]);
  const shown = page.requests.filter(matches);
  const body = $("requests").tBodies[0];
  body.replaceChildren(...shown.slice(0, MAX_ROWS_DRAWN).map(requestRow));
  const journal = page.state.journal;
  const notes = [];
  if (page.requests.length === 0) notes.push("no requests yet: point a client at this namespace's URL, and they appear here as they arrive");
  if (shown.length > MAX_ROWS_DRAWN) notes.push(`${shown.length - MAX_ROWS_DRAWN} more match: narrow the filters`);
  if (shown.length !== page.requests.length) notes.push(`${shown.length} of ${page.requests.length} match`);
  const cell = cellShown();
  if (cell && shown.length < cell.count) {
    notes.push(`${cell.route} × ${cell.outcome} counted ${cell.count}: the journal no longer keeps ` +
      `${cell.count - shown.length} of them (a reset, or its bound, let them go; the coverage keeps counting)`);
  }
  if (journal && journal.dropped) notes.push(`the journal dropped ${journal.dropped} older requests`);
  if (page.state.skipped) notes.push(`${page.state.skipped} requests arrived too fast to show`);
  $("journal-note").textContent = notes.join(" · ");
  $("count-requests").textContent = page.requests.length;
}

function cellShown() {
  // The clicked coverage cell, while the filters are still the ones the click set.
  const cell = page.cell;
  if (!cell || $("filter-route").value !== cell.route || $("filter-outcome").value !== cell.outcome) return null;
  if ($("filter-status").value || $("filter-fault").value || $("filter-text").value.trim()) return null;
  return cell;
}

function fillSelect(select, values, anyLabel, fixed) {
  const wanted = (fixed || (anyLabel ? [["", anyLabel]] : [])).concat(
    values.map((v) => (Array.isArray(v) ? v : [v, v])));
  const key = JSON.stringify(wanted);
  if (select.dataset.options === key) return;
  const chosen = select.value;
  select.replaceChildren(...wanted.map(([value, label]) => h("option", { value }, label)));
  select.dataset.options = key;
  select.value = wanted.some(([value]) => value === chosen) ? chosen : "";
}

function requestRow(entry) {
  const notes = [];
  if (entry.unmatched) notes.push(h("span", { class: "unknown" }, entry.unmatched));
  if (entry.warning) notes.push(h("span", { class: "warning" }, `key: ${entry.warning}`));
  if (entry.clientGone) notes.push(h("span", { class: "warning" }, "client went away before its body arrived"));
  if (entry.upstream) notes.push(h("span", {}, `upstream ${entry.upstream.status} in ${entry.upstream.durationMs} ms`));
  const query = new URLSearchParams(flatQuery(entry.query)).toString();
  return h("tr", {
    class: `status-${statusClass(entry)}${page.open === entry.seq ? " open" : ""}`,
    "data-seq": entry.seq,
    tabindex: "0",
    onclick: () => openRequest(entry.seq),
    onkeydown: (event) => { if (event.key === "Enter") openRequest(entry.seq); },
  },
  h("td", {}, started(entry)),
  h("td", {}, entry.method),
  h("td", { class: "path" }, entry.path + (query ? `?${query}` : "")),
  h("td", {}, entry.route || h("span", { class: "unknown" }, "unknown")),
  h("td", { class: "status" }, entry.status === null ? "—" : entry.status),
  h("td", { class: "number" }, entry.durationMs.toFixed(1)),
  h("td", {}, faultText(entry.fault)),
  h("td", { class: "notes" }, notes));
}

function flatQuery(query) {
  const pairs = [];
  for (const [name, value] of Object.entries(query || {})) {
    for (const one of Array.isArray(value) ? value : [value]) pairs.push([name, one]);
  }
  return pairs;
}

async function openRequest(seq) {
  page.open = seq;
  let full = page.details.get(seq);
  if (!full && page.live) {
    try {
      full = await call(`requests/${seq}`);
    } catch (error) {
      if (page.open === seq) showDetail(h("p", { class: "warning" }, `request ${seq}: ${error.message}`));
      return;
    }
  }
  if (page.open !== seq) return;  // another row was clicked meanwhile
  if (full) showDetail(detailOf(full));
  drawRequests();
}

function showDetail(content) {
  const detail = $("detail");
  detail.replaceChildren(
    h("button", { type: "button", class: "close", onclick: () => { detail.hidden = true; page.open = null; drawRequests(); } }, "Close"),
    content);
  detail.hidden = false;
  detail.scrollIntoView({ block: "nearest" });
}

function detailOf(full) {
  const answer = full.answer;
  const curl = h("pre", { id: "curl", class: "curl" }, full.curl);
  const copy = h("button", { type: "button", id: "copy-curl", onclick: () => copyText(full.curl, copy) }, "Copy as curl");
  return h("div", { "data-seq": full.seq },
    h("h2", {}, `${full.method} ${full.path}`, h("small", {}, ` #${full.seq} · ${full.route || "unknown route"}`)),
    full.unmatched ? h("p", { class: "unknown" }, full.unmatched) : null,
    full.fault ? h("p", {}, `Fault: ${faultText(full.fault)}${full.retryAfter ? `, Retry-After ${full.retryAfter} s` : ""}`) : null,
    full.warning ? h("p", { class: "warning" }, `Key: ${full.warning}`) : null,
    h("div", { class: "exchange" },
      h("div", {},
        h("h3", {}, "Request"),
        headerTable(full.headers),
        h("pre", { class: "body", id: "request-body" }, pretty(full.body))),
      h("div", {},
        h("h3", {}, answer ? `Answer ${answer.status}` : "No answer"),
        answer ? headerTable(answer.headers) : h("p", {}, full.clientGone ? "the client went away first" : "the connection ended without an answer"),
        answer ? h("pre", { class: "body", id: "answer-body" }, answer.body ? pretty(answer.body) : "(streamed)") : null)),
    h("h3", {}, "Again, from a shell ", copy),
    curl);
}

function headerTable(headers) {
  return table(["Header", "Value"], Object.entries(headers || {}).map(([n, v]) => [n, v]));
}

async function copyText(text, button) {
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = "Copied";
  } catch (_) {
    const range = document.createRange();
    range.selectNodeContents($("curl"));
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    button.textContent = "Selected: press Ctrl+C";
  }
  setTimeout(() => { button.textContent = "Copy as curl"; }, 1500);
}

function recordedTable(title, items, headings, cells) {
  // The newest first; a long list shows its newest MAX_ROWS_DRAWN and says how many more.
  const shown = items.slice(-MAX_ROWS_DRAWN).reverse();
  const more = items.length - shown.length;
  return [
    h("h2", {}, `${title} (${items.length})`),
    table(headings, shown.map(cells)),
    more ? h("p", { class: "note" }, `${more} older not drawn`) : null,
  ];
}

function drawRecorded() {
  const { events, svcEvents, targets } = page.recorded;
  const exposures = svcEvents.filter((e) => e.type === "exposure");
  const signals = svcEvents.filter((e) => e.type === "signal");
  const others = svcEvents.filter((e) => e.type !== "exposure" && e.type !== "signal");
  const props = (e) => h("code", {}, json(e.properties));
  $("tab-recorded").replaceChildren(
    ...recordedTable("Exposures", exposures, ["Targeting key", "Flag", "Variant", "Value"],
      (e) => [e.targetingKey, e.flagKey, e.variant, json(e.value)]),
    ...recordedTable("Signals", signals, ["Kind", "Name", "Targeting key", "Properties"],
      (e) => [(e.properties || {}).kind, e.name, e.targetingKey, props(e)]),
    ...(others.length ? recordedTable("Other captured events", others, ["Type", "Event"],
      (e) => [e.type, h("code", {}, json(e))]) : []),
    ...recordedTable("Targets", targets, ["Targeting key", "Kind", "Environment", "Properties"],
      (t) => [t.targetingKey, t.kind, t.environment, props(t)]),
    ...recordedTable("PostHog batch events", events, ["Event", "Distinct id", "Timestamp", "Properties"],
      (e) => [e.event, e.distinct_id, e.timestamp, props(e)]));
  $("count-recorded").textContent = svcEvents.length + targets.length + events.length;
}

function drawFaults() {
  const faults = page.state.faults || [];
  $("faults").tBodies[0].replaceChildren(...faults.map((f) => h("tr", { "data-fault": f.id },
    h("td", {}, f.id),
    h("td", {}, f.applyTo.join(", ")),
    h("td", {}, f.sequence ? `sequence: ${f.sequence.map((s) => s.mode).join(" → ")}` : describeStep(f)),
    h("td", { class: "number" }, f.fired),
    h("td", { class: "number" }, f.ttlRequests === null ? "∞" : f.ttlRequests),
    h("td", {}, f.probability === null ? "" : `${f.probability} (seed ${f.seed})`),
    h("td", {}, page.live ? h("button", { type: "button", class: "disarm", onclick: () => disarm(f.id) }, "Disarm") : null))));
  fillSelect($("arm-mode"), page.state.faultModes || []);
  if (!$("arm-mode").value) $("arm-mode").value = "500"; // a mode chosen, never an empty one
  $("count-faults").textContent = faults.length || "";
}

// An armed fault's record carries only the parameters its mode uses (MODE_PARAMETERS in
// stub/faults/modes.py), so each one it has is shown; status null is the mode's own.
function describeStep(step) {
  const extra = ["status", "delayMs", "retryAfter"]
    .filter((name) => step[name] !== undefined && step[name] !== null)
    .map((name) => `${name} ${step[name]}`);
  return extra.length ? `${step.mode} (${extra.join(", ")})` : step.mode;
}

async function disarm(id) {
  try {
    await call(`fault/${id}`, { method: "DELETE" });
  } catch (error) {
    $("arm-result").textContent = error.message;
  }
}

async function arm(event) {
  event.preventDefault();
  if (!$("arm-mode").value) {
    $("arm-result").textContent = "choose a mode";
    return;
  }
  const document_ = { mode: $("arm-mode").value };
  const applyTo = $("arm-applyTo").value.split(",").map((s) => s.trim()).filter(Boolean);
  if (applyTo.length) document_.applyTo = applyTo.length === 1 ? applyTo[0] : applyTo;
  for (const name of ["ttlRequests", "status", "delayMs", "retryAfter", "probability"]) {
    const raw = $(`arm-${name}`).value;
    if (raw !== "") document_[name] = Number(raw);
  }
  try {
    const armed = await call("fault", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(document_) });
    $("arm-result").textContent = armed.fault ? `armed #${armed.fault.id}` : "cleared";
  } catch (error) {
    $("arm-result").textContent = error.message;
  }
}

function drawServed() {
  const shown = page.state;
  const flags = shown.flags || [];
  const parts = [
    h("h2", {}, `Flags (${flags.length})`),
    table(["Key", "Type", "Value", "Variant", "Enabled", "Reason"], flags.map((f) =>
      [f.key, f.type, h("code", {}, json(f.value)), f.variant, f.enabled ? "yes" : "no", f.reason + (f.conditional ? " (conditional)" : "")])),
    h("h2", {}, "Rate limits"),
    h("p", {}, describeLimits(shown.rateLimit)),
  ];
  if (shown.management) {
    parts.push(h("h2", {}, "Management plane"));
    for (const [org, state] of Object.entries(shown.management.orgs)) {
      parts.push(h("h3", {}, `Organisation ${org}`));
      parts.push(table(["Project", "Slug", "Environments", "Control points"], state.projects.map((p) => [
        `${p.displayName || p.name} (${p.projectId})`, p.slug,
        (p.environments || []).map((e) => `${e.environmentName || e.name || e.envId}${e.isDefault ? " (default)" : ""}`).join(", "),
        (p.controlPoints || []).length])));
    }
  }
  $("tab-served").replaceChildren(...parts);
}

function describeLimits(limits) {
  if (!limits) return "";
  const each = limits.perKey.map((k) => `${k.key}: ${k.perSecond}/s`);
  if (limits.perSecond !== null) each.unshift(`every key: ${limits.perSecond}/s`);
  return each.length ? each.join(" · ") : "none";
}

// ---- coverage: what the namespace's requests met, route by outcome (stub/coverage.py), held
// against a profile of what a kind of client is expected to meet; its gaps first

function byOutcome(a, b) {
  // ok, then the statuses answered, then the faults, then the rest (rate limited, no answer)
  const rank = (o) => (o === "ok" ? 0 : /^[0-9]+$/.test(o) ? 1 : o.startsWith("fault ") ? 2 : 3);
  return rank(a) - rank(b) || a.localeCompare(b, "en", { numeric: true });
}

function heat(count) {
  return count >= 100 ? 4 : count >= 10 ? 3 : count >= 2 ? 2 : count >= 1 ? 1 : 0;
}

function drawCoverage() {
  const coverage = page.state.coverage;
  if (!coverage) return;
  const names = Object.keys(coverage.profiles);
  fillSelect($("coverage-profile"), names);
  if (!$("coverage-profile").value && names.length) $("coverage-profile").value = names[0];
  const profile = coverage.profiles[$("coverage-profile").value];
  const gaps = profile ? profile.gaps : [];
  const counts = new Map(coverage.cells.map((c) => [`${c.route}\n${c.outcome}`, c.count]));
  const gapAt = new Map();  // "route\noutcome" -> the gap that outcome would fill
  for (const gap of gaps) {
    for (const outcome of gap.expected) gapAt.set(`${gap.route}\n${outcome}`, gap);
  }
  // Rows: the routes with gaps first, in the profile's order; columns: every outcome met or expected.
  const routes = [...new Set(gaps.map((g) => g.route))];
  const others = new Set(coverage.cells.map((c) => c.route).filter((r) => !routes.includes(r)));
  routes.push(...[...others].sort());
  const outcomes = [...new Set(coverage.cells.map((c) => c.outcome).concat(gaps.flatMap((g) => g.expected)))].sort(byOutcome);

  $("coverage-summary").textContent = profile
    ? `${profile.name}, ${profile.description}: ${profile.met} of ${profile.of} cells met` +
      (gaps.length ? `, ${gaps.length} ${gaps.length === 1 ? "gap" : "gaps"}` : ", no gaps")
    : "";
  $("coverage-gaps").replaceChildren(...gaps.map((gap) => h("li", { "data-route": gap.route },
    gap.says, h("small", {}, ` (expected: ${gap.expected.join(" or ")})`))));
  drawFlagsRead(coverage.flags);
  const table = $("coverage");
  table.tHead.replaceChildren(h("tr", {}, h("th", {}, "Route"), outcomes.map((o) => h("th", { scope: "col" }, o))));
  table.tBodies[0].replaceChildren(...routes.map((route) => h("tr", { "data-route": route },
    h("th", { scope: "row" }, route),
    outcomes.map((outcome) => coverageCell(route, outcome, counts.get(`${route}\n${outcome}`) || 0,
      gapAt.get(`${route}\n${outcome}`))))));
  $("coverage-note").replaceChildren(
    coverage.cells.length ? "" : "no requests counted yet · ",
    "requests counted: ", ...["1", "2–9", "10–99", "100+"].map((label, i) => h("span", { class: `heat-${i + 1}` }, label)),
    " · a count picks out its requests in the list; the counts outlive a reset, the journal may not keep them all");
  $("count-coverage").textContent = profile ? `${profile.met}/${profile.of}` : "";
}

function drawFlagsRead(flags) {
  // The fixture flags no request was answered: each one a fixture no test needed, or a test missing.
  if (!flags || !flags.of) return $("coverage-flags").replaceChildren();
  const never = flags.neverRead;
  $("coverage-flags").replaceChildren(`fixture flags: ${flags.of - never.length} of ${flags.of} read`,
    never.length ? "; never read: " : "",
    ...never.flatMap((name, i) => [i ? ", " : "", h("code", { class: "never-read" }, name)]));
}

function coverageCell(route, outcome, count, gap) {
  const attrs = { class: [count ? `heat-${heat(count)}` : "", gap ? "gap" : ""].join(" ").trim() || null,
    "data-outcome": outcome, title: gap ? gap.says : `${route} × ${outcome}: ${count}` };
  if (!count) return h("td", attrs, gap ? "0" : "");
  return h("td", attrs, h("button", { type: "button", onclick: () => showCell(route, outcome, count) }, count));
}

function showCell(route, outcome, count) {
  // The requests that filled a cell: the list filtered to its route and outcome.
  page.cell = { route: route === "unknown path" ? "unknown" : route, outcome, count };
  for (const id of ["filter-status", "filter-fault", "filter-text"]) $(id).value = "";
  drawRequests();  // the cell's route and outcome among the choices first
  $("filter-route").value = page.cell.route;
  $("filter-outcome").value = outcome;
  showTab("requests");
  drawRequests();
}

function drawNamespaces() {
  const listed = (page.state.namespaces || { namespaces: [] }).namespaces;
  const link = (name) => (name === "default" ? "/_test/ui" : `/ns/${encodeURIComponent(name)}/_test/ui`);
  $("tab-namespaces").replaceChildren(table(
    ["Namespace", "Flags", "Armed faults", "Requests", "Captured", "Targets", "PostHog events"],
    listed.map((n) => [
      page.live ? h("a", { href: link(n.name) }, n.name) : n.name,
      n.flags, n.armedFaults, n.recorded.requests, n.recorded.svcEvents, n.recorded.targets, n.recorded.events])));
  $("count-namespaces").textContent = listed.length;
}

// ---- wiring

function showTab(name) {
  for (const button of document.querySelectorAll("#tabs button")) {
    const chosen = button.dataset.tab === name;
    button.setAttribute("aria-selected", String(chosen));
    $(`tab-${button.dataset.tab}`).hidden = !chosen;
  }
}

function start() {
  for (const button of document.querySelectorAll("#tabs button")) {
    button.addEventListener("click", () => showTab(button.dataset.tab));
  }
  for (const id of ["filter-route", "filter-status", "filter-fault", "filter-outcome", "filter-text"]) {
    $(id).addEventListener("input", drawRequests);
  }
  $("filters").addEventListener("submit", (event) => event.preventDefault());
  $("coverage-profile").addEventListener("input", drawCoverage);
  $("coverage-form").addEventListener("submit", (event) => event.preventDefault());
  const data = $("svc-stub-snapshot");
  if (data) {
    page.live = false;
    document.body.classList.add("snapshot");
    const shown = JSON.parse(data.textContent);
    take(shown);
    $("pause").hidden = true;
    $("arm").hidden = true;
    setStatus(`snapshot of ${shown.stub}, taken ${new Date(shown.snapshotAt).toLocaleString()}`);
    return;
  }
  $("pause").addEventListener("click", () => {
    page.paused = !page.paused;
    $("pause").textContent = page.paused ? "Resume" : "Pause";
    setStatus(page.paused ? "paused (0 new)" : "live");
    if (!page.paused) {
      for (const shown of page.held.splice(0)) take(shown);
    }
  });
  $("arm").addEventListener("submit", arm);
  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, $("token").value);
    $("token-form").hidden = true;
  });
  follow();
}

document.addEventListener("DOMContentLoaded", start);
