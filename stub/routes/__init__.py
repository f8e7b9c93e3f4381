"""One route table per plane: runtime (/v1), vendor (legacy), control (/health, /_test)."""
