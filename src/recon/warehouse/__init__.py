"""The DuckDB warehouse: opening it, its SQL files and migrations, landing and loading a
run, the working copy and its lock, publishing, the data dictionary, the consolidated file."""
