"""Offline tools, never on the routing path: describe, inventory, replay lines."""
