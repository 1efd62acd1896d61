"""A kernel reached from a JupyterLab page, as a person's notebook reaches it: headless
Chromium (playwright) opens the lab page of the run's Jupyter server, and the page's
own kernel client (JupyterLab's ``serviceManager``, exposed by
``--LabApp.expose_app_in_browser``) starts the kernel and makes each request; the
page's clock (``performance.timeOrigin + performance.now()``, the wall clock to a few
microseconds) stamps the send and the arrivals, the kernel's headers the rest.

The browser may reach 127.0.0.1 alone: every other request is refused. The browser,
its page and the kernel go on close, whatever happened.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from .kernel import KernelDied, NoReply, check_kernel
from .server import JupyterServer
from .trips import ECHO_SETUP, ECHO_TARGET, LIMIT_NOTICES, CellFailed, Trip, stamp, stream_code

T = TypeVar("T")
_NEEDS = (
    "--via browser needs playwright (pip install playwright) and a Chromium: Debian's "
    "/usr/bin/chromium, or playwright's own (playwright install chromium)"
)
DEBIAN_CHROMIUM = "/usr/bin/chromium"

# The page's part: one request, timed, as JupyterLab's kernel client makes it.
_TRIPS = """
async ([kind, count, code, size, buffers, target, notices]) => {
  const now = () => (performance.timeOrigin + performance.now()) / 1000;
  const kernel = window.zmqbenchKernel;
  // Every IOPub message by its request: its busy stamp, its output, its idle status.
  const seen = {};
  const entry = (id) => (seen[id] = seen[id] || {outputs: 0, output_bytes: 0, limits: []});
  const idle = {};
  const onIOPub = (_, msg) => {
    const id = msg.parent_header && msg.parent_header.msg_id;
    if (!id) return;
    const trip = entry(id), type = msg.header.msg_type;
    if (type === 'status' && msg.content.execution_state === 'busy') trip.busy = msg.header.date;
    else if (type === 'status' && msg.content.execution_state === 'idle') {
      trip.idle_received = now();
      if (idle[id]) idle[id]();
    } else if (type === 'stream' && msg.content.name === 'stdout') {
      trip.outputs += 1; trip.output_bytes += new TextEncoder().encode(msg.content.text).length;
    } else if (type === 'stream') {
      for (const [limit, notice] of notices) {
        if (msg.content.text.includes(notice)) trip.limits.push(limit);
      }
    } else if (type === 'error') trip.error = `${msg.content.ename}: ${msg.content.evalue}`;
    else if (type === 'comm_msg' && !trip.reply_received) {
      trip.reply_received = now(); trip.replied = msg.header.date;
    }
  };
  const idleOf = (id) => new Promise((resolve) => {
    if (entry(id).idle_received) resolve(); else idle[id] = resolve;
  });
  const replied = (id, msg, at) => {
    const trip = entry(id);
    trip.reply_received = at; trip.replied = msg.header.date;
    trip.started = (msg.metadata || {}).started || null;
    if (msg.content.status === 'error') trip.error = `${msg.content.ename}: ${msg.content.evalue}`;
  };
  kernel.iopubMessage.connect(onIOPub);
  const trips = [];
  try {
    let comm = null;
    if (kind === 'comm') {
      const key = `${size} ${buffers}`;
      comm = window.zmqbenchComms[key];
      if (!comm) {
        comm = kernel.createComm(target);
        await comm.open({}).done;
        window.zmqbenchComms[key] = comm;
      }
    }
    const payload = 'x'.repeat(size);
    const bytes = new Uint8Array(size);
    for (let i = 0; i < count; i++) {
      const sent = now();
      let id;
      if (kind === 'comm') {
        const data = buffers ? {size: size} : {text: payload};
        const future = comm.send(data, {}, buffers ? [bytes.buffer] : []);
        id = future.msg.header.msg_id;
        await Promise.all([future.done, idleOf(id)]);
      } else if (kind === 'info') {
        const reply = await kernel.requestKernelInfo();
        id = reply.parent_header.msg_id;
        replied(id, reply, now());
        await idleOf(id);
      } else {
        const future = kernel.requestExecute({code: code, store_history: false, silent: false});
        id = future.msg.header.msg_id;
        future.onReply = (msg) => replied(id, msg, now());
        await future.done;
        await idleOf(id);
      }
      const trip = entry(id);
      trip.sent = sent;
      trip.ended = Math.max(trip.idle_received, trip.reply_received);
      trips.push(trip);
      if (trip.error) break;
    }
  } finally {
    kernel.iopubMessage.disconnect(onIOPub);
  }
  return trips;
}
"""


class BrowserKernel:
    """A kernel a JupyterLab page in headless Chromium started through the run's
    server; ``trips`` runs requests in the page."""

    def __init__(self, server: JupyterServer, name: str, timeout: float) -> None:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            raise ValueError(_NEEDS) from None
        check_kernel(name)
        self.name, self.timeout = name, timeout
        self.implementation = ""  # the kernel's, once the page has its kernel_info
        # Playwright's synchronous API on a thread of its own: it refuses a thread that
        # runs an event loop already (a notebook's kernel's), and keeps to the thread
        # that started it.
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="zmqbench-browser")
        try:
            self._on_worker(self._open, server)
        except BaseException:
            self.close()
            raise

    def _on_worker(self, call: Callable[..., T], *args: Any) -> T:
        return self._worker.submit(call, *args).result()

    def _open(self, server: JupyterServer) -> None:
        from playwright.sync_api import sync_playwright

        self._playwright = sync_playwright().start()
        executable = DEBIAN_CHROMIUM if os.path.exists(DEBIAN_CHROMIUM) else None
        self._browser = self._playwright.chromium.launch(
            executable_path=executable, args=["--no-sandbox"]
        )
        self.page = self._browser.new_page()
        self.page.set_default_timeout(1000 * max(self.timeout, 60.0))
        self.page.route("**/*", _only_this_host)
        self.page.goto(f"{server.url}/lab?token={server.token}")
        self.page.wait_for_function("window.jupyterapp && window.jupyterapp.serviceManager")
        self.implementation = self.page.evaluate(
            """async (name) => {
                const manager = window.jupyterapp.serviceManager;
                await manager.ready;
                window.zmqbenchKernel = await manager.kernels.startNew({name: name});
                window.zmqbenchComms = {};
                return (await window.zmqbenchKernel.info).implementation || '';
            }""",
            self.name,
        )

    def trips(
        self, kind: str, count: int, code: str = "", size: int = 0, buffers: bool = False
    ) -> list[Trip]:
        """``count`` requests of ``kind`` (execute, info, comm, stream) from the page."""
        if kind == "comm" and not getattr(self, "_echo", False):
            self._run("execute", 1, ECHO_SETUP, 0, False)
            self._echo = True
        if kind == "stream":
            return self._run("execute", 1, stream_code(count, size), size, False)
        return self._run(kind, count, code, size, buffers)

    def _run(self, kind: str, count: int, code: str, size: int, buffers: bool) -> list[Trip]:
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        notices = [[limit, notice] for limit, notice in LIMIT_NOTICES.items()]
        try:
            asked = [kind, count, code, size, buffers, ECHO_TARGET, notices]
            raw = self._on_worker(self.page.evaluate, _TRIPS, asked)
        except PlaywrightTimeout:
            raise NoReply(f"the {self.name} kernel did not answer the page in time") from None
        except Exception as exc:
            if "dead" in str(exc) or ("Kernel" in str(exc) and "disposed" in str(exc)):
                raise KernelDied(
                    f"the {self.name} kernel died (the page's client says: {exc})"
                ) from None
            raise
        trips = [_trip(entry) for entry in raw]
        failed = next((entry["error"] for entry in raw if entry.get("error")), None)
        if failed:
            raise CellFailed(f"the cell raised {failed}")
        return trips

    def close(self) -> None:
        """Shut the kernel down from the page, then the browser, then its thread."""
        with contextlib.suppress(Exception):
            self._on_worker(self._close)
        self._worker.shutdown()

    def _close(self) -> None:
        with contextlib.suppress(Exception):
            self.page.evaluate("async () => { await window.zmqbenchKernel.shutdown(); }")
        with contextlib.suppress(Exception):
            self._browser.close()
        with contextlib.suppress(Exception):
            self._playwright.stop()


def _trip(entry: dict[str, Any]) -> Trip:
    started = entry.get("started")
    return Trip(
        sent=entry["sent"],
        busy=stamp(entry["busy"]),
        replied=stamp(entry["replied"]),
        reply_received=entry["reply_received"],
        ended=entry["ended"],
        started=stamp(started) if started else None,
        outputs=entry["outputs"],
        output_bytes=entry["output_bytes"],
        limits_hit=tuple(entry["limits"]),
    )


def _only_this_host(route: Any) -> None:
    """The page may reach the run's server on 127.0.0.1, and nothing else."""
    if route.request.url.startswith("http://127.0.0.1:"):
        route.continue_()
    else:
        route.abort()


@contextlib.contextmanager
def browser_kernel(server: JupyterServer, name: str, timeout: float) -> Iterator[BrowserKernel]:
    kernel = BrowserKernel(server, name, timeout)
    try:
        yield kernel
    finally:
        kernel.close()


__all__ = ["BrowserKernel", "browser_kernel"]
