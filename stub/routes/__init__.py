"""The planes' routes: each handler an answer, from its namespace's state and the request, to
a request the pipeline (stub/http/) has already admitted, and will fault and record."""
