// kubesim CEL helper: evaluates admission webhook matchConditions for the
// Python server (kubesim/cel.py) with @bufbuild/cel.
//
// Protocol: one JSON request per line on stdin, one JSON answer per line on
// stdout, in order.
//   request: {"id": 1, "exprs": ["object.metadata.name == 'x'"],
//             "vars": {"object": ..., "oldObject": ..., "request": ...}}
//   answer:  {"id": 1, "results": [{"value": true} | {"error": "..."}]}
//   or {"id": 2, "compile": ["expr", ...]}: only parse, answer as above.
// Values arrive as JSON with integers as JSON integers (bound as CEL int, as
// the apiserver binds int64 fields) and floats tagged {"$f": 1.5} (CEL double).
// Objects become CEL maps, arrays CEL lists. Parsed plans are cached.
"use strict";
const readline = require("readline");
const { plan, parse, celEnv, isCelError, isCelMap, isCelList } = require("@bufbuild/cel");
const { strings } = require("@bufbuild/cel/ext");

const env = celEnv({ funcs: strings });
const cache = new Map();

function toCel(v) {
  if (v === null || v === undefined) return null;
  if (Array.isArray(v)) return v.map(toCel);
  if (typeof v === "number") return Number.isInteger(v) ? BigInt(v) : v;
  if (typeof v === "object") {
    const keys = Object.keys(v);
    if (keys.length === 1 && keys[0] === "$f") return Number(v.$f);
    const m = new Map();
    for (const k of keys) m.set(k, toCel(v[k]));
    return m;
  }
  return v;
}

function fromCel(v) {
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "boolean" || typeof v === "string" || typeof v === "number" || v === null) return v;
  if (isCelList(v)) { const out = []; for (const x of v) out.push(fromCel(x)); return out; }
  if (isCelMap(v)) { const out = {}; for (const [k, x] of v) out[String(k)] = fromCel(x); return out; }
  return String(v);
}

// cel-go (what kube-apiserver uses) words a missing map key "no such key: k".
function goWording(msg) {
  return String(msg).replace(/^field not found: /, "no such key: ");
}

function evaluate(expr, vars) {
  let p = cache.get(expr);
  if (p === undefined) {
    try {
      p = plan(env, parse(expr));
    } catch (e) {
      p = { compileError: String(e && e.message ? e.message : e) };
    }
    if (cache.size > 1000) cache.clear();
    cache.set(expr, p);
  }
  if (p.compileError) return { error: "compilation failed: " + p.compileError, compile: true };
  let r;
  try {
    r = p(vars);
  } catch (e) {
    return { error: goWording(e && e.message ? e.message : e) };
  }
  if (isCelError(r)) return { error: goWording(r.message) };
  return { value: fromCel(r) };
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  let req;
  try {
    req = JSON.parse(line);
  } catch (e) {
    process.stdout.write(JSON.stringify({ id: null, error: "bad request: " + e.message }) + "\n");
    return;
  }
  if (Array.isArray(req.compile)) {
    // compile-only: what the apiserver checks when a configuration is written
    const results = req.compile.map((e) => {
      try {
        parse(e);
        return { value: true };
      } catch (ex) {
        return { error: "compilation failed: " + String(ex && ex.message ? ex.message : ex) };
      }
    });
    process.stdout.write(JSON.stringify({ id: req.id, results }) + "\n");
    return;
  }
  const vars = {};
  for (const [k, v] of Object.entries(req.vars || {})) vars[k] = toCel(v);
  const results = (req.exprs || []).map((e) => evaluate(e, vars));
  process.stdout.write(JSON.stringify({ id: req.id, results }) + "\n");
});
rl.on("close", () => process.exit(0));
