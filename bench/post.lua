-- wrk: the request every scenario sends (set by run.py through environment variables)
wrk.method = os.getenv("BENCH_METHOD") or "POST"
wrk.path = os.getenv("BENCH_PATH") or "/v1/flags/evaluate"
wrk.body = os.getenv("BENCH_BODY")
if wrk.body then
  wrk.headers["Content-Type"] = "application/json"
end
wrk.headers["Authorization"] = "Bearer " .. (os.getenv("BENCH_TOKEN") or "bench-key")
if os.getenv("BENCH_ORIGIN") then
  wrk.headers["Origin"] = os.getenv("BENCH_ORIGIN")
end
