"""The ``notes._rtx`` module: its files form one package, so relative imports work."""
