"""The driver protocol: checking a server claimcheck did not write (docs/driver.md)."""
