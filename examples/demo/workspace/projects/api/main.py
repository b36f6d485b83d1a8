"""A pretend API, for the mcp-roots demo."""


def hello(name: str) -> str:
    return f"hello, {name}"
