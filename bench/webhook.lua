-- wrk script of bench/webhook.py: POSTs the body of the file named by
-- $BENCH_BODY as JSON, and prints one machine-readable line at the end:
--   RESULT requests duration_us non2xx socket_errors p50_us p99_us p999_us
local f = assert(io.open(os.getenv("BENCH_BODY"), "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT %d %d %d %d %d %d %d\n",
    summary.requests, summary.duration, e.status,
    e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9)))
end
