"""Two product surfaces, support and billing: shared handler code, separate tables."""
