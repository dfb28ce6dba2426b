"""Resumes on records: sniffing (what type the bytes are), storage (where bytes live), uploads (checking,
storing and streaming back), fields (the marshmallow side) and bodies (the JSON-or-multipart route decorator)."""
