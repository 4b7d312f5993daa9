import { joinLivePieces, liveText, type LiveBridge, type LiveItem } from '../../src/contracts/live-text';
import { LiveFeed } from '../../src/client/live-events';
import { liveUrlSetting, redactedRedisUrl, redisUrlProblem } from '../../src/storage/redis-live-bridge';

/** A bridge that records what the hub asks of it. */
function recordingBridge(): LiveBridge & { sent: LiveItem[]; watching: Set<string>; calls: string[] } {
  const bridge = {
    location: 'test',
    sent: [] as LiveItem[],
    watching: new Set<string>(),
    calls: [] as string[],
    publish: (item: LiveItem) => void bridge.sent.push(item),
    watch: (id: string) => void (bridge.watching.add(id), bridge.calls.push(`watch ${id}`)),
    unwatch: (id: string) => void (bridge.watching.delete(id), bridge.calls.push(`unwatch ${id}`)),
    close: async () => undefined,
  };
  return bridge;
}

const piece = (workflowId: string, text: string): LiveItem => ({
  kind: 'text',
  workflowId,
  call: 1,
  attempt: 1,
  at: 0,
  text,
});

afterEach(() => liveText.useBridge(undefined));

it("hands items to this process's readers and the bridge; the bridge's items to this process's readers only", () => {
  const bridge = recordingBridge();
  liveText.useBridge(bridge);
  const got: string[] = [];
  const stop = liveText.subscribe('wf-1', (item) => got.push(item.kind === 'text' ? item.text : item.event.type));
  const alsoStop = liveText.subscribe('wf-1', () => undefined);
  // One subscription to the channel however many readers, until the last leaves.
  expect(bridge.calls).toEqual(['watch wf-1']);
  liveText.publish(piece('wf-1', 'here'));
  liveText.deliver(piece('wf-1', 'from elsewhere'));
  expect(got).toEqual(['here', 'from elsewhere']);
  expect(bridge.sent.map((i) => (i.kind === 'text' ? i.text : ''))).toEqual(['here']);
  // With a bridge, a workflow nobody here reads may have readers elsewhere.
  expect(liveText.listening('wf-nobody-here')).toBe(true);
  stop();
  expect(bridge.calls).toEqual(['watch wf-1']);
  alsoStop();
  expect(bridge.calls).toEqual(['watch wf-1', 'unwatch wf-1']);
});

it('moves the subscriptions of readers already reading to a bridge set later, and back off it', () => {
  const stop = liveText.subscribe('wf-2', () => undefined);
  expect(liveText.listening('wf-other')).toBe(false);
  const bridge = recordingBridge();
  liveText.useBridge(bridge);
  expect([...bridge.watching]).toEqual(['wf-2']);
  liveText.useBridge(undefined);
  expect([...bridge.watching]).toEqual([]);
  stop();
});

it('reads AGENT_LIVE_URL: Redis URLs only, the password never shown, false for none', () => {
  expect(liveUrlSetting(undefined, undefined)).toEqual({});
  expect(liveUrlSetting(undefined, ' ')).toEqual({});
  expect(liveUrlSetting(undefined, 'redis://cache:6379/2')).toEqual({ liveUrl: 'redis://cache:6379/2' });
  expect(liveUrlSetting(false, 'redis://cache:6379')).toEqual({});
  expect(liveUrlSetting('rediss://:secret@cache:6380', undefined)).toEqual({ liveUrl: 'rediss://:secret@cache:6380' });
  expect(() => liveUrlSetting(undefined, 'http://cache:6379')).toThrow(
    'AGENT_LIVE_URL must start with redis:// or rediss://, got "http://cache:6379/"',
  );
  expect(() => liveUrlSetting('cache:6379', undefined)).toThrow(/^liveUrl must start with redis:\/\//);
  expect(redisUrlProblem('redis://cache:6379/zero')).toMatch(/path is a database number/);
  expect(redisUrlProblem('not a url')).toMatch(/must be a Redis URL like redis:\/\/localhost:6379/);
  expect(redactedRedisUrl('redis://user:hunter2@cache:6379')).toBe('redis://user:***@cache:6379');
  expect(() => liveUrlSetting(undefined, 'ftp://u:hunter2@cache')).toThrow(/^(?!.*hunter2)/);
});

describe('joinLivePieces', () => {
  const at = (text: string, from: number, over: Partial<LiveItem> = {}): LiveItem =>
    ({ ...piece('wf-1', text), at: from, ...over }) as LiveItem;
  const event = (offset: number): LiveItem => ({
    kind: 'event',
    workflowId: 'wf-1',
    event: { type: 'turn_completed', offset } as never,
  });

  it('joins pieces that follow one another into one, keeping the order of everything else', () => {
    const joined = joinLivePieces([at('Hel', 0), at('lo ', 3), at('world', 6), event(4), at('!', 11)]);
    expect(joined).toEqual([at('Hello world', 0), event(4), at('!', 11)]);
  });

  it('keeps pieces apart across calls, attempts, workflows and gaps', () => {
    const items = [
      at('a', 0),
      at('b', 1, { attempt: 2 }),
      at('c', 2, { attempt: 2 }),
      at('d', 0, { call: 2 }),
      at('e', 5, { call: 2 }),
      at('f', 6, { call: 2, workflowId: 'wf-2' }),
    ];
    expect(joinLivePieces(items).map((i) => (i.kind === 'text' ? i.text : ''))).toEqual(['a', 'bc', 'd', 'e', 'f']);
  });
});

it('text reaches readers live when one reads it here or a bridge is up; a worker watching for its turn end is no reader', () => {
  const id = 'reaches-1';
  expect(liveText.reachesReaders(id)).toBe(false);
  const unwatch = liveText.subscribe(id, () => undefined, { watcher: true });
  expect(liveText.listening(id)).toBe(true);
  expect(liveText.reachesReaders(id)).toBe(false);
  const unread = liveText.subscribe(id, () => undefined);
  expect(liveText.reachesReaders(id)).toBe(true);
  unread();
  unread(); // twice: counted once
  expect(liveText.reachesReaders(id)).toBe(false);
  const bridge = { ...recordingBridge(), up: true };
  liveText.useBridge(bridge);
  expect(liveText.reachesReaders(id)).toBe(true);
  bridge.up = false;
  expect(liveText.reachesReaders(id)).toBe(false);
  unwatch();
});

it('a feed whose reader shows no text (progress) is no reader the live path reaches', () => {
  const id = 'reaches-2';
  const progress = new LiveFeed(id, { showsText: false });
  expect(liveText.listening(id)).toBe(true);
  expect(liveText.reachesReaders(id)).toBe(false);
  const page = new LiveFeed(id);
  expect(liveText.reachesReaders(id)).toBe(true);
  page.close();
  progress.close();
  expect(liveText.listening(id)).toBe(false);
});
