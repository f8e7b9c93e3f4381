"""The management plane: projects, environments and control points, org-scoped by the key."""
