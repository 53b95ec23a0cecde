"""Shortcut audit: cheap features an outside auditor would try, and whether any answers a task without its attribute."""
