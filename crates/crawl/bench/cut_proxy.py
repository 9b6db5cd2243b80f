"""Loopback TCP proxy that cuts connections part way through their responses.

Usage: python3 cut_proxy.py LISTEN_PORT TARGET_PORT CUT_PROB SEED

Each accepted connection is forwarded to 127.0.0.1:TARGET_PORT; with
probability CUT_PROB (seeded) the server-to-client direction is cut after a
random 0-60,000 bytes and the client side reset. Prints connection and cut
counts every 5 s. Used to check that a crawl never stores a partial body
(docs/BENCHMARKS.md, "Kill-and-resume soak"): crawl a `mgz sim serve` web with
`--resolve '*.sim=127.0.0.1:LISTEN_PORT'`, then compare each stored page's
content_hash with the SHA-256 of the page fetched directly.
"""
import asyncio, random, sys
lp, tp, prob, seed = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
stats = {"conns": 0, "cut": 0}
async def pipe(r, w, limit=None):
    sent = 0
    try:
        while True:
            data = await r.read(4096)
            if not data:
                break
            if limit is not None and sent + len(data) > limit:
                w.write(data[: max(0, limit - sent)])
                await w.drain()
                return "cut"
            w.write(data); sent += len(data)
            await w.drain()
    except Exception:
        pass
    finally:
        try:
            w.close()
        except Exception:
            pass
async def handle(cr, cw):
    stats["conns"] += 1
    try:
        sr, sw = await asyncio.open_connection("127.0.0.1", tp)
    except Exception:
        cw.close(); return
    limit = None
    if rng.random() < prob:
        limit = rng.randint(0, 60000)
        stats["cut"] += 1
    t1 = asyncio.create_task(pipe(cr, sw))
    res = await pipe(sr, cw, limit)
    if res == "cut":
        # abrupt: reset the client side
        try:
            cw.transport.abort()
        except Exception:
            pass
        sw.close()
    t1.cancel()
async def main():
    srv = await asyncio.start_server(handle, "127.0.0.1", lp)
    async def report():
        while True:
            await asyncio.sleep(5)
            print(stats, flush=True)
    asyncio.create_task(report())
    async with srv:
        await srv.serve_forever()
asyncio.run(main())
