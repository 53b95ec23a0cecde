"""Local servers that speak the providers' wire formats, for tests over real HTTP on 127.0.0.1."""
