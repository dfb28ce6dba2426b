"""Files on records: resumes' sniffing (what type the bytes are, Office containers told apart by
structure), storage (where bytes live), uploads (checking, storing and streaming back), fields (the
marshmallow side), bodies (the JSON-or-multipart route decorator) and routes (the download
route)."""
