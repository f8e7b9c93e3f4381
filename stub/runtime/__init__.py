"""The runtime plane: /v1/flags/evaluate, /v1/capture, /v1/targets/register."""
