"""The blueprint repository: resolve -> authorize -> bind, over one ``officina.toml``."""
