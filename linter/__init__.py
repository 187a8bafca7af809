"""The lint engine, its rules and its formatters: findings with exact positions for every policy a file holds."""
