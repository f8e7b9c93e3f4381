"""Breaking things on purpose: the fault vocabulary (modes) and when a fault fires (arming)."""
