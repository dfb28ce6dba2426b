"""The processes as deployed: gunicorn's worker class and what it refuses, request threads, memory
kept in check, start-up checks, the console scripts, and the JSON logs every process writes."""
