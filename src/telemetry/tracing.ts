/* eslint-disable @typescript-eslint/no-require-imports -- the SDK loads when tracing is on, see below */
import * as otel from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';

// The OpenTelemetry SDK and Temporal's interceptors (some 250 modules) load only when tracing is
// installed: a worker without tracing starts without them. `@opentelemetry/api` is light, and
// its tracer is a no-op until a provider is registered.
const sdk = () => ({
  ...(require('@opentelemetry/sdk-trace-node') as typeof import('@opentelemetry/sdk-trace-node')),
  ...(require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base')),
  ...(require('@opentelemetry/resources') as typeof import('@opentelemetry/resources')),
  ...(require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http')),
  ...(require('@temporalio/interceptors-opentelemetry') as typeof import('@temporalio/interceptors-opentelemetry')),
});

/** Where spans go: a span processor (with its exporter) and the resource naming this service. */
export interface TracingOptions {
  spanProcessor: SpanProcessor;
  /** Default: `service.name` = `durable-agents` ({@link tracingFromEnv} takes `OTEL_SERVICE_NAME`). */
  resource?: Resource;
}

/** The tracer of the agents' own spans (model calls, tool calls). */
export const TRACER_NAME = 'durable-agents';

let provider: NodeTracerProvider | undefined;

/**
 * Registers the process's OpenTelemetry tracer provider (with Node's async context, so spans
 * nest across awaits) sending spans to `options.spanProcessor`, once per process; returns the
 * Temporal plugin that traces clients, workflows and activities into it
 * (`@temporalio/interceptors-opentelemetry`). Pass the plugin to `Worker.create` and `Client`, or
 * `tracing` to `AgentsPlugin`, which does both.
 */
export function installTracing(options: TracingOptions): OpenTelemetryPlugin {
  const resource = options.resource ?? serviceResource(undefined);
  // A process has one global provider: the first call's processor receives the spans of the
  // clients, activities and GenAI calls; each plugin exports its workflows' spans to its own.
  const { NodeTracerProvider, OpenTelemetryPlugin } = sdk();
  if (!provider) {
    provider = new NodeTracerProvider({ resource, spanProcessors: [options.spanProcessor] });
    provider.register();
  }
  return new OpenTelemetryPlugin({ resource, spanProcessor: options.spanProcessor });
}

/**
 * Tracing as the environment asks: spans exported over OTLP/HTTP when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, with the
 * exporter's standard variables (headers, timeout); undefined otherwise, and then nothing is
 * installed: no provider, no interceptors, no cost.
 */
export function tracingFromEnv(env: NodeJS.ProcessEnv): TracingOptions | undefined {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return undefined;
  if (env.OTEL_SDK_DISABLED === 'true') return undefined;
  // One exporter per environment: the worker and the client of one process share it. (The
  // exporter reads its endpoint, headers and timeout from the process's OTEL_* variables itself.)
  let tracing = fromEnv.get(env);
  if (!tracing) {
    const { BatchSpanProcessor, OTLPTraceExporter } = sdk();
    tracing = {
      spanProcessor: new BatchSpanProcessor(new OTLPTraceExporter()),
      resource: serviceResource(env.OTEL_SERVICE_NAME),
    };
    fromEnv.set(env, tracing);
  }
  return tracing;
}

const fromEnv = new WeakMap<NodeJS.ProcessEnv, TracingOptions>();

function serviceResource(name: string | undefined): Resource {
  return new (sdk().Resource)({ 'service.name': name || 'durable-agents' });
}

/** Sends spans still buffered (before a process exits). */
export async function flushTracing(): Promise<void> {
  await provider?.forceFlush();
}

/** The tracer of the agents' spans: a no-op until tracing is installed. */
export function agentTracer(): otel.Tracer {
  return otel.trace.getTracer(TRACER_NAME);
}
