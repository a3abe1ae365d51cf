"""The client's transport against a scripted HTTP server on a real socket (a Unix socket or TCP on
127.0.0.1): requests on the wire, error answers, retries (`Retry-After`, connection errors, a
router's 502/504, never a session's cell twice) and the event stream of a cell. The server answers
what each test scripts; it knows nothing of warden beyond the API's shapes (docs/serve.md)."""

from __future__ import annotations

import json
import os
import socket
import tempfile
import threading
import unittest
from typing import Any, Callable, Dict, List, Optional, Tuple, Union
from unittest import mock

from warden_client import (
    Client,
    NotFound,
    ProtocolError,
    QueueFull,
    SessionGone,
    Unavailable,
    WardenConnectionError,
    WardenTimeout,
)
from warden_client import client as client_module

#: One scripted answer: raw bytes to send, or None to close the connection without answering.
Answer = Optional[bytes]


def answer(status: int, body: Union[bytes, Dict[str, Any]], headers: Optional[Dict[str, str]] = None) -> bytes:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    head = [f"HTTP/1.1 {status} X", f"Content-Length: {len(data)}", "Connection: close"]
    head += [f"{name}: {value}" for name, value in (headers or {}).items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + data


def error(status: int, code: str, message: str, headers: Optional[Dict[str, str]] = None) -> bytes:
    return answer(status, {"error": {"code": code, "message": message}}, headers)


class Request:
    def __init__(self, method: str, path: str, headers: Dict[str, str], body: bytes) -> None:
        self.method, self.path, self.headers, self.body = method, path, headers, body

    def json(self) -> Any:
        return json.loads(self.body)


class ScriptedServer:
    """Accepts connections, reads one request from each and sends the next scripted answer."""

    def __init__(self, answers: List[Answer], unix: bool = True) -> None:
        self.answers = list(answers)
        self.requests: List[Request] = []
        self._dir = tempfile.TemporaryDirectory()
        if unix:
            self.path = os.path.join(self._dir.name, "warden.sock")
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.bind(self.path)
            self.url = "unix:" + self.path
        else:
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.sock.bind(("127.0.0.1", 0))
            self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.sock.listen(8)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                self.requests.append(self._read(conn))
                reply = self.answers.pop(0) if self.answers else error(500, "script", "no answer scripted")
                if reply is not None:
                    conn.sendall(reply)

    @staticmethod
    def _read(conn: socket.socket) -> Request:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(body) < length:
            chunk = conn.recv(65536)
            if not chunk:
                break
            body += chunk
        return Request(method, path, headers, body)

    def close(self) -> None:
        # Shutting the listener down wakes the thread blocked in accept() (closing it alone does not).
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self._thread.join(5)
        self._dir.cleanup()


class ServerTest(unittest.TestCase):
    def serve(self, answers: List[Answer], unix: bool = True) -> ScriptedServer:
        server = ScriptedServer(answers, unix)
        self.addCleanup(server.close)
        return server

    def setUp(self) -> None:
        # Connection retries without the real pauses (the same count and the same rules).
        patch = mock.patch.object(client_module, "CONNECTION_RETRY_DELAYS", (0.0,))
        patch.start()
        self.addCleanup(patch.stop)


RECORD = {"status": "ok", "exit_code": 0, "stdout": "42\n", "stderr": ""}


class Requests(ServerTest):
    def test_a_run_is_one_json_post_with_the_token(self) -> None:
        server = self.serve([answer(200, RECORD)], unix=False)
        client = Client(server.url, token="secret")
        record = client.run("print(42)", policy="data", inputs={"a.csv": "x,y\n"}, limits={"wall_time_ms": 1000})
        self.assertEqual(record.stdout, "42\n")
        [request] = server.requests
        self.assertEqual((request.method, request.path), ("POST", "/v1/run"))
        self.assertEqual(request.headers["authorization"], "Bearer secret")
        self.assertEqual(request.headers["content-type"], "application/json")
        self.assertEqual(
            request.json(),
            {
                "code": "print(42)",
                "policy": "data",
                "inputs": [{"name": "a.csv", "content_base64": "eCx5Cg=="}],
                "limits": {"wall_time_ms": 1000},
            },
        )

    def test_the_socket_needs_no_token(self) -> None:
        server = self.serve([answer(200, {"status": "ok"})])
        self.assertEqual(Client(server.url, token="").health(), {"status": "ok"})
        self.assertNotIn("authorization", server.requests[0].headers)

    def test_an_error_answer_raises_its_typed_exception_with_the_server_s_message(self) -> None:
        server = self.serve([error(404, "not_found", 'no session "s1" for this client')])
        with self.assertRaises(NotFound) as raised:
            Client(server.url).session_info("s1")
        self.assertIs(type(raised.exception), NotFound)
        self.assertEqual(raised.exception.message, 'no session "s1" for this client')
        self.assertEqual(raised.exception.status, 404)

    def test_an_answer_that_is_not_json_is_a_protocol_error(self) -> None:
        server = self.serve([answer(200, b"<html>")])
        with self.assertRaises(ProtocolError):
            Client(server.url).health()

    def test_addresses(self) -> None:
        self.assertEqual(Client("/run/x.sock")._unix, "/run/x.sock")
        self.assertEqual(Client("unix:///run/x.sock")._unix, "/run/x.sock")
        with self.assertRaises(ValueError):
            Client("ftp://host")
        with self.assertRaises(ValueError):
            Client("http://")


class Retries(ServerTest):
    def test_an_overloaded_server_is_retried_after_its_retry_after(self) -> None:
        server = self.serve([error(429, "queue_full", "busy", {"Retry-After": "0"}), answer(200, RECORD)])
        client = Client(server.url)
        self.assertTrue(client.run("1").ok)
        self.assertEqual((len(server.requests), client.retried), (2, 1))

    def test_a_wait_longer_than_allowed_raises_at_once(self) -> None:
        server = self.serve([error(429, "queue_full", "busy", {"Retry-After": "120"})])
        with self.assertRaises(QueueFull) as raised:
            Client(server.url, max_retry_wait=10).run("1")
        self.assertEqual(raised.exception.retry_after, 120.0)
        self.assertEqual(len(server.requests), 1)

    def test_retries_are_bounded(self) -> None:
        busy = error(503, "queue_timeout", "no slot", {"Retry-After": "0"})
        server = self.serve([busy, busy, busy])
        with self.assertRaises(Unavailable):
            Client(server.url, max_retries=2).run("1")
        self.assertEqual(len(server.requests), 3)

    def test_a_connection_that_cannot_be_made_is_retried_then_raises(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            client = Client("unix:" + os.path.join(tmp, "none.sock"), max_retries=2)
            with self.assertRaises(WardenConnectionError) as raised:
                client.health()
        self.assertIn("cannot reach warden", raised.exception.message)
        self.assertEqual(client.retried, 2)

    def test_a_run_whose_answer_was_lost_is_sent_again(self) -> None:
        server = self.serve([None, answer(200, RECORD)])
        self.assertTrue(Client(server.url).run("1").ok)
        self.assertEqual(len(server.requests), 2)

    def test_a_cell_whose_answer_was_lost_is_never_sent_again(self) -> None:
        server = self.serve([answer(200, {"id": "s1", "policy": {"name": "p"}}), None])
        session = Client(server.url).session()
        with self.assertRaises(WardenConnectionError):
            session.execute("x += 1")
        self.assertEqual([r.path for r in server.requests], ["/v1/sessions", "/v1/sessions/s1/execute"])

    def test_a_router_s_502_is_retried_except_for_a_cell(self) -> None:
        server = self.serve(
            [
                error(502, "bad_gateway", "node down"),
                answer(200, RECORD),
                answer(200, {"id": "s1"}),
                error(502, "bad_gateway", "node down"),
            ]
        )
        client = Client(server.url)
        self.assertTrue(client.run("1").ok)
        session = client.session()
        with self.assertRaises(Exception) as raised:
            session.execute("1")
        self.assertEqual(getattr(raised.exception, "status", None), 502)
        self.assertEqual(len(server.requests), 4)

    def test_no_answer_in_time_is_a_timeout(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.addCleanup(listener.close)
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        client = Client(f"http://127.0.0.1:{listener.getsockname()[1]}", timeout=0.2)
        with self.assertRaises(WardenTimeout):
            client.health()


class Sessions(ServerTest):
    def test_a_streamed_cell_passes_its_output_on_and_returns_its_record(self) -> None:
        events = (
            b'event: stream\ndata: {"name": "stdout", "text": "a"}\n\n'
            b'event: stream\ndata: {"name": "stderr", "text": "b"}\n\n'
            b'event: record\ndata: {"status": "ok", "execution_count": 1,\ndata:  "result": {"text/plain": "3"}}\n\n'
        )
        server = self.serve(
            [
                answer(200, {"id": "s1", "limits": {"wall_time_ms": 1}}),
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n" + events,
                answer(200, {"id": "s1", "status": "closed"}),
            ]
        )
        seen: List[Tuple[str, str]] = []
        on_output: Callable[[str, str], None] = lambda name, text: seen.append((name, text))  # noqa: E731
        with Client(server.url).session() as session:
            cell = session.execute("print('a')", on_output=on_output)
        self.assertEqual(seen, [("stdout", "a"), ("stderr", "b")])
        self.assertEqual((cell.result_text, cell.limits), ("3", {"wall_time_ms": 1}))
        self.assertEqual(server.requests[1].headers["accept"], "text/event-stream")
        self.assertEqual((server.requests[-1].method, server.requests[-1].path), ("DELETE", "/v1/sessions/s1"))

    def test_a_session_the_server_no_longer_knows_is_gone(self) -> None:
        server = self.serve(
            [answer(200, {"id": "s1"}), error(404, "not_found", 'no session "s1" for this client (ended)')]
        )
        session = Client(server.url).session()
        with self.assertRaises(SessionGone) as raised:
            session.execute("1")
        self.assertFalse(raised.exception.state_lost)
        self.assertTrue(session.closed)
        self.assertIsNone(session.close())

    def test_files_go_up_and_come_down_as_bytes(self) -> None:
        server = self.serve(
            [
                answer(200, {"id": "s1"}),
                answer(200, {"path": "d/a b.txt", "bytes": 3}),
                answer(200, b"abc"),
                answer(200, {"files": [{"path": "d/a b.txt", "size": 3}]}),
            ]
        )
        session = Client(server.url).session()
        self.assertEqual(session.upload("d/a b.txt", "abc")["bytes"], 3)
        self.assertEqual(session.download("d/a b.txt"), b"abc")
        self.assertEqual(session.files(), [{"path": "d/a b.txt", "size": 3}])
        put = server.requests[1]
        self.assertEqual((put.method, put.path, put.body), ("PUT", "/v1/sessions/s1/files/d/a%20b.txt", b"abc"))
        self.assertEqual(put.headers["content-type"], "application/octet-stream")


if __name__ == "__main__":
    unittest.main()
