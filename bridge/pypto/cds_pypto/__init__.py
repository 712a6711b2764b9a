"""The PyPTO bridge of the harness (docs/pypto.md)."""

VERSION = "1.0"
