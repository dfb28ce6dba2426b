"""Resumes on records: sniffing (what type the bytes are), storage (where bytes live), uploads (checking,
storing and streaming back), fields (the marshmallow side), bodies (the JSON-or-multipart route decorator) and
routes (the download route)."""
