import { redisLiveBridge } from '../../src/storage/redis-live-bridge';
import { eventually } from '../helpers/processes';
import { redisProblem, startRedis } from '../helpers/redis-server';

// Whether the live channel is up decides how often a model call sends its text batches (see
// `liveText.reachesReaders`): 100 ms while Redis carries the text to readers, 50 ms while it cannot.
const skip = redisProblem();
if (skip) process.stderr.write(`\nredis-bridge-up.test: skipped: ${skip}\n`);

(skip ? it.skip : it)(
  'the Redis channel says it is up while Redis is, down once it is gone, and up when it is back',
  async () => {
    const redis = await startRedis();
    const bridge = redisLiveBridge({ url: redis.url, namespace: 'bridge-up', warn: () => undefined });
    try {
      expect(await eventually(() => bridge.up === true, 10_000)).toBe(true);
      await redis.kill();
      expect(await eventually(() => bridge.up === false, 10_000)).toBe(true);
      await redis.restart();
      expect(await eventually(() => bridge.up === true, 10_000)).toBe(true);
    } finally {
      await bridge.close();
      await redis.stop();
    }
  },
);
