"""The twin's durable variables, as the validation search compares them (a commit log shows only these)."""

from spec import model as M

DURABLE = ("claim", "nextExec", "log", "recovery", "inputs", "cancelled", "wakes")
DURABLE_INDEX = tuple(M.State._fields.index(v) for v in DURABLE)
