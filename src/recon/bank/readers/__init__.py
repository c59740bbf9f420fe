"""One reader per statement format, each `read_<format>(path, content) -> list[Statement]`."""
