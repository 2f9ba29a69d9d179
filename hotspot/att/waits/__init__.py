"""Wait attribution: which memory instructions each executed `s_waitcnt` waited for.

Producers come from the wave's own `waitcnt` edges (the decoder's memory-op -> s_waitcnt arrows,
FORMATS.md §1.2) when the wave file has them, otherwise from a static reconstruction that replays the
gfx9 counter rules over the wave's executed order (HARDWARE.md §3):

- `s_load*`/`s_store*`/`s_buffer_*` (SMEM), `s_sendmsg*` and every `ds_*` push onto the lgkm list;
  `buffer_*`/`global_*`/`scratch_*` onto the vm list; `flat_*` onto both.
- at `s_waitcnt ...cnt(N)` the oldest `len - N` entries of that list are popped and become the
  wait's producers (lgkm first, then vm: the decoder writes them in that order).
- an outstanding SMEM makes lgkm out of order; the decoder still pops the oldest entries, so do we,
  and such waits are counted (`out_of_order_waits`) because their producers are a best guess.

Each wait instance's stall is split equally over its producers (docs/waits.md); instances with nothing
outstanding go to an explicit "no producer" bucket, so per waitcnt the blame always sums to its stall.
The per-wave functions below are the hot path of the wave pass: plain lists and dicts, no objects.
"""
