import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SseParser, type SseEvent } from '../../web/src/sseParser.js';

const RUN_DATA = '{"farm_id":"WF_GS01","issue":"2026112000","revision":57,"published_at":"2026-11-20T09:12:05+08:00"}';
const SERVER =
  `retry: 3000\n\n` +
  `id: 4210\nevent: run\ndata: ${RUN_DATA}\n\n` +
  `: keep-alive\n\n` +
  `id: 4211\nevent: run\ndata: {"farm_id":"WF_GS02"}\n\n` +
  `: keep-alive\n\n`;
const SERVER_EVENTS: SseEvent[] = [
  { id: '4210', event: 'run', data: RUN_DATA },
  { id: '4211', event: 'run', data: '{"farm_id":"WF_GS02"}' },
];

interface Outcome {
  events: SseEvent[];
  retryMs: number | undefined;
  lastEventId: string | undefined;
}

const feed = (chunks: readonly string[]): Outcome => {
  const p = new SseParser();
  const events: SseEvent[] = [];
  for (const c of chunks) events.push(...p.push(c));
  return { events, retryMs: p.retryMs, lastEventId: p.lastEventId };
};

/** The stream in one chunk, cut in two at every position, cut in three at pairs of positions, and one character at a time: all the same. */
const assertSplitProof = (stream: string, expected: Outcome): void => {
  assert.deepEqual(feed([stream]), expected);
  for (let i = 0; i <= stream.length; i++) {
    assert.deepEqual(feed([stream.slice(0, i), stream.slice(i)]), expected, `cut at ${i}`);
  }
  for (let i = 0; i <= stream.length; i += 3) {
    for (let j = i; j <= stream.length; j += 5) {
      assert.deepEqual(feed([stream.slice(0, i), '', stream.slice(i, j), stream.slice(j)]), expected, `cut at ${i}, ${j}`);
    }
  }
  assert.deepEqual(feed([...stream]), expected, 'one character at a time');
};

describe('SseParser', () => {
  it("reads the server's stream", () => {
    const p = new SseParser();
    assert.deepEqual(p.push('retry: 3000\n\n'), []);
    assert.equal(p.retryMs, 3000);
    assert.equal(p.lastEventId, undefined);
    assert.deepEqual(p.push(`id: 4210\nevent: run\ndata: ${RUN_DATA}\n\n: keep-alive\n\n`), [SERVER_EVENTS[0]]);
    assert.equal(p.lastEventId, '4210');
    assert.deepEqual(JSON.parse(SERVER_EVENTS[0]!.data).revision, 57);
  });

  it('gives the same events wherever the stream is cut (property)', () => {
    assertSplitProof(SERVER, { events: SERVER_EVENTS, retryMs: 3000, lastEventId: '4211' });
  });

  it('reads CRLF and CR line ends the same, wherever cut', () => {
    const expected = { events: SERVER_EVENTS, retryMs: 3000, lastEventId: '4211' };
    assertSplitProof(SERVER.replace(/\n/g, '\r\n'), expected);
    assertSplitProof(SERVER.replace(/\n/g, '\r'), expected);
    // Mixed in one stream.
    assertSplitProof('data: a\r\ndata: b\rdata: c\n\r\nevent: e\rdata: d\r\r', {
      events: [
        { id: undefined, event: 'message', data: 'a\nb\nc' },
        { id: undefined, event: 'e', data: 'd' },
      ],
      retryMs: undefined,
      lastEventId: undefined,
    });
  });

  it('dispatches an event ended by CR at once, and takes a following LF as part of CRLF', () => {
    const p = new SseParser();
    assert.deepEqual(p.push('data: x\r\r'), [{ id: undefined, event: 'message', data: 'x' }]);
    // The LF completes the CRLF the last CR began: it is not a blank line of its own, nor a line break in data.
    assert.deepEqual(p.push('\ndata: y\r'), []);
    assert.deepEqual(p.push('\n\r\n'), [{ id: undefined, event: 'message', data: 'y' }]);
  });

  it('does not dispatch an event before its blank line', () => {
    const p = new SseParser();
    assert.deepEqual(p.push('id: 1\nevent: run\ndata: x\n'), []);
    assert.equal(p.lastEventId, undefined);
    assert.deepEqual(p.push('\n'), [{ id: '1', event: 'run', data: 'x' }]);
    assert.equal(p.lastEventId, '1');
  });

  it('ignores comments, also between the lines of one event', () => {
    assert.deepEqual(feed([': hello\n\n:\n\ndata: a\n: in between\ndata: b\n\n']).events, [
      { id: undefined, event: 'message', data: 'a\nb' },
    ]);
  });

  it('joins multi-line data with LF, keeping empty lines', () => {
    assert.deepEqual(feed(['data: one\ndata:\ndata: three\n\n']).events, [{ id: undefined, event: 'message', data: 'one\n\nthree' }]);
    assert.deepEqual(feed(['data\n\n']).events, [{ id: undefined, event: 'message', data: '' }]);
  });

  it('strips one space after the colon, no more', () => {
    assert.deepEqual(feed(['data:x\n\ndata:  y \n\n']).events, [
      { id: undefined, event: 'message', data: 'x' },
      { id: undefined, event: 'message', data: ' y ' },
    ]);
    // A colon inside the value stays.
    assert.deepEqual(feed(['data: a: b\n\n']).events[0]?.data, 'a: b');
  });

  it("defaults the event name to 'message', per event", () => {
    assert.deepEqual(feed(['event: run\ndata: a\n\ndata: b\n\nevent:\ndata: c\n\n']).events, [
      { id: undefined, event: 'run', data: 'a' },
      { id: undefined, event: 'message', data: 'b' },
      { id: undefined, event: 'message', data: 'c' },
    ]);
  });

  it('forgets the event name of a block without data', () => {
    assert.deepEqual(feed(['event: run\n\ndata: a\n\n']).events, [{ id: undefined, event: 'message', data: 'a' }]);
  });

  it('reads retry only when it is all digits', () => {
    const p = new SseParser();
    p.push('retry: 3000\n\n');
    assert.equal(p.retryMs, 3000);
    p.push('retry: 3s\n\nretry: -1\n\nretry:\n\n');
    assert.equal(p.retryMs, 3000);
    p.push('retry:500\n\n');
    assert.equal(p.retryMs, 500);
  });

  it('keeps the last id for later events and updates lastEventId on dispatch', () => {
    const p = new SseParser();
    assert.deepEqual(p.push('id: 7\ndata: a\n\ndata: b\n\n'), [
      { id: '7', event: 'message', data: 'a' },
      { id: '7', event: 'message', data: 'b' },
    ]);
    assert.equal(p.lastEventId, '7');
    p.push('id: 8\ndata: c\n');
    assert.equal(p.lastEventId, '7');
    p.push('\n');
    assert.equal(p.lastEventId, '8');
    // An id with NUL is ignored; an empty id clears it.
    assert.deepEqual(p.push('id: 9\0\ndata: d\n\n'), [{ id: '8', event: 'message', data: 'd' }]);
    assert.deepEqual(p.push('id\ndata: e\n\n'), [{ id: '', event: 'message', data: 'e' }]);
    assert.equal(p.lastEventId, '');
  });

  it('ignores unknown fields', () => {
    assert.deepEqual(feed(['foo: bar\nDATA: x\ndata: y\nevent : z\n\n']).events, [{ id: undefined, event: 'message', data: 'y' }]);
  });
});
