/**
 * A language model of any AI SDK provider package (`@ai-sdk/google`, `@ai-sdk/amazon-bedrock`,
 * `@ai-sdk/mistral`, ...), as its `@ai-sdk/provider` specification defines it (v2, v3 or v4).
 * Give it to the plugin as a named model: `new AgentsPlugin({ models: { gemini: google('gemini-2.5-pro') } })`.
 *
 * Written out structurally (the members the adapter relies on) rather than imported from
 * `@ai-sdk/provider`: that package is needed for its types only, and as a dependency it would be
 * installed, with its `engines`, into every project, AI SDK or not. Every `LanguageModelV2`, `V3`
 * and `V4` fits this type.
 */
export interface AiSdkLanguageModel {
  /** `v2`, `v3` or `v4`: the version of the specification the provider package implements. */
  readonly specificationVersion: 'v2' | 'v3' | 'v4';
  /** The provider's name, e.g. `google.generative-ai`. */
  readonly provider: string;
  /** The model's id at the provider, e.g. `gemini-2.5-pro`. */
  readonly modelId: string;
  /** One call, answered whole (the specification's `doGenerate`). */
  doGenerate(options: never): PromiseLike<unknown>;
  /** One call, answered as a stream of parts (the specification's `doStream`). */
  doStream(options: never): PromiseLike<unknown>;
}

/** Whether a value is an AI SDK language model (by its specification version and methods). */
export function isAiSdkLanguageModel(value: unknown): value is AiSdkLanguageModel {
  const v = value as Partial<AiSdkLanguageModel> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    ['v2', 'v3', 'v4'].includes(String(v.specificationVersion)) &&
    typeof v.doGenerate === 'function' &&
    typeof v.doStream === 'function'
  );
}
