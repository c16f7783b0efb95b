"""A small HTTPS client of the Kubernetes API for the scale bench: requests and watches with the
control plane's admin client certificate (tests/harness/controlplane writes it under <dir>/pki). One
connection per thread; the bench needs nothing else, so it does not depend on a client library."""

import http.client
import json
import ssl
import threading
import urllib.parse


class Api:
    def __init__(self, url, pki_dir, user_agent="scale-bench/1"):
        parsed = urllib.parse.urlparse(url)
        self.host, self.port = parsed.hostname, parsed.port
        self.user_agent = user_agent
        self.context = ssl.create_default_context(cafile=f"{pki_dir}/ca.crt")
        self.context.load_cert_chain(f"{pki_dir}/admin.crt", f"{pki_dir}/admin.key")
        self.local = threading.local()

    def _connection(self, timeout=60):
        return http.client.HTTPSConnection(self.host, self.port, context=self.context, timeout=timeout)

    def request(self, method, path, body=None, content_type="application/json"):
        """Returns (status code, decoded JSON or None). Reconnects once on a dropped connection."""
        data = json.dumps(body).encode() if body is not None else None
        headers = {"User-Agent": self.user_agent, "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = content_type
        for attempt in (1, 2):
            conn = getattr(self.local, "conn", None) or self._connection()
            self.local.conn = conn
            try:
                conn.request(method, path, body=data, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
                return resp.status, (json.loads(raw) if raw else None)
            except (http.client.HTTPException, OSError):
                conn.close()
                self.local.conn = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def text(self, path):
        """GET `path` as text (the API server's /metrics); raises unless 200."""
        conn = self._connection()
        try:
            conn.request("GET", path, headers={"User-Agent": self.user_agent, "Accept": "text/plain"})
            resp = conn.getresponse()
            raw = resp.read().decode()
        finally:
            conn.close()
        if resp.status != 200:
            raise RuntimeError(f"GET {path}: {resp.status} {raw[:200]}")
        return raw

    def create(self, path, obj):
        code, out = self.request("POST", path, obj)
        if code not in (200, 201):
            raise RuntimeError(f"POST {path}: {code} {out}")
        return out

    def merge_patch(self, path, patch):
        code, out = self.request("PATCH", path, patch, "application/merge-patch+json")
        if code != 200:
            raise RuntimeError(f"PATCH {path}: {code} {out}")
        return out

    def delete(self, path):
        code, out = self.request("DELETE", path, {"propagationPolicy": "Background"})
        if code not in (200, 202, 404):
            raise RuntimeError(f"DELETE {path}: {code} {out}")

    def open_watch(self, path, rv):
        """Opens a watch of `path` from `rv` and closes it once the API server has answered (it sends
        the headers when the watch is set up): what a reflector stopped right after its first
        sync costs the API server."""
        sep = "&" if "?" in path else "?"
        conn = self._connection()
        try:
            conn.request("GET", f"{path}{sep}watch=1&allowWatchBookmarks=true&resourceVersion={rv}&timeoutSeconds=300",
                         headers={"User-Agent": self.user_agent})
            return conn.getresponse().status
        except (http.client.HTTPException, OSError):
            return None
        finally:
            conn.close()

    def watch(self, path, on_event, stop):
        """Lists `path` then watches it from the list's resourceVersion, calling on_event(type,
        object) for each item (the list's as ADDED); rewatches when the server ends a watch
        (every 60 s at most), relists on 410 Gone. Returns after `stop` is set and the next
        event or the watch's end arrives: run it in a daemon thread."""
        rv = None
        while not stop.is_set():
            if rv is None:
                code, listed = self.request("GET", path)
                if code != 200:
                    raise RuntimeError(f"LIST {path}: {code} {listed}")
                for item in listed.get("items", []):
                    on_event("ADDED", item)
                rv = listed["metadata"]["resourceVersion"]
            sep = "&" if "?" in path else "?"
            conn = self._connection(timeout=None)
            try:
                conn.request("GET", f"{path}{sep}watch=1&allowWatchBookmarks=true&resourceVersion={rv}&timeoutSeconds=60",
                             headers={"User-Agent": self.user_agent})
                resp = conn.getresponse()
                if resp.status == 410:
                    rv = None
                    continue
                while not stop.is_set():
                    line = resp.readline()
                    if not line:
                        break
                    event = json.loads(line)
                    obj = event.get("object", {})
                    if event.get("type") == "ERROR":
                        rv = None if obj.get("code") == 410 else rv
                        break
                    rv = obj.get("metadata", {}).get("resourceVersion", rv)
                    if event["type"] != "BOOKMARK":
                        on_event(event["type"], obj)
            except (http.client.HTTPException, OSError):
                pass
            finally:
                conn.close()
