"""Model backends and the registry that names them."""
