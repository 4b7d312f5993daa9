import { ActivityFailure, ApplicationFailure, RetryState, TimeoutFailure } from '@temporalio/common';
import { failureInfo, toolFailureMessage } from '../../src/workflows/failure-info';

const activityFailure = (activityType: string, cause: Error) =>
  new ActivityFailure('activity failed', activityType, '1', RetryState.MAXIMUM_ATTEMPTS_REACHED, 'worker', cause);

describe('what a failed activity tells the LLM and the caller', () => {
  it('says a tool call whose workers were lost was given up, and that it may have taken effect', () => {
    const lost = activityFailure('executeTool', new TimeoutFailure('heartbeat timeout', undefined, 'HEARTBEAT'));
    expect(toolFailureMessage(lost, 60_000, '8s')).toBe(
      'the tool call was given up: the worker running it stopped responding (no heartbeat for 8s: it crashed, was stopped, or was blocked) on every attempt. It may or may not have taken effect; check before calling it again',
    );
    const slow = activityFailure('executeTool', new TimeoutFailure('start-to-close', undefined, 'START_TO_CLOSE'));
    expect(toolFailureMessage(slow, 60_000, '8s')).toBe('the tool did not finish within its 60000 ms timeout');
    expect(
      toolFailureMessage(
        activityFailure('executeTool', ApplicationFailure.create({ message: 'lookup failed: boom' })),
        60_000,
        '8s',
      ),
    ).toBe('lookup failed: boom');
  });

  it('names the model-call bound that ran out', () => {
    const lost = failureInfo(
      activityFailure('callModel', new TimeoutFailure('heartbeat timeout', undefined, 'HEARTBEAT')),
    );
    expect(lost).toMatchObject({
      errorType: 'ModelCall.Timeout',
      error: expect.stringMatching(/^the model call ran out of time: its worker stopped responding on every attempt/),
    });
    const budget = failureInfo(
      activityFailure(
        'callModel',
        ApplicationFailure.create({
          message: 'the model call ran out of time: 300 s waiting',
          type: 'ModelCall.Timeout',
          nonRetryable: true,
        }),
      ),
    );
    expect(budget).toMatchObject({
      errorType: 'ModelCall.Timeout',
      error: 'the model call ran out of time: 300 s waiting',
    });
  });
});
