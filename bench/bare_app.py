"""The baseline for bench/rest_throughput.py: a bare Flask app answering a fixed JSON object."""

from flask import Flask, request

app = Flask(__name__)

RECORD = {
    "id": "2b9a1b8e-0d2c-4b7e-9a51-3f0f5c1d2e4a",
    "title": "Registered Nurse",
    "status": "open",
    "number": 1,
}


@app.get("/")
def fixed():
    return RECORD


@app.post("/")
def accept():
    request.get_json()
    return RECORD, 201
