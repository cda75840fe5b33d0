"""The live feedback service as the service tests see it: its budget, its worker count and a client."""
from __future__ import annotations

import http.client
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.support.public_tasks import multipart

BUDGET = 3.0  # seconds: the runaway submission needs far more, every other one far less


WORKERS = 3


@dataclass
class Server:
    host: str
    port: int
    tasks: Path
    process: subprocess.Popen
    log: Path

    def request(self, method: str, path: str, body: bytes = b"", headers: dict | None = None):
        """(status, headers, decoded JSON body) of one request on a new connection."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=120)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), json.loads(response.read())
        finally:
            connection.close()

    def evaluate(self, problem: bytes, train: bytes, submission: bytes | str, *, fields=None):
        if isinstance(submission, str):
            submission = submission.encode()
        fields = fields or [("problem", problem), ("train_data", train), ("submission", submission)]
        body, content_type = multipart(fields)
        return self.request("POST", "/evaluate", body, {"Content-Type": content_type})

    def task_files(self, task_id: str) -> tuple[bytes, bytes]:
        folder = self.tasks / task_id / "agent"
        return (folder / "problem.json").read_bytes(), (folder / "train.npy").read_bytes()
