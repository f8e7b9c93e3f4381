-- wrk: the request every scenario sends (set by run.py through environment variables)
wrk.method = "POST"
wrk.path = os.getenv("BENCH_PATH") or "/v1/flags/evaluate"
wrk.body = os.getenv("BENCH_BODY")
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer bench-key"
