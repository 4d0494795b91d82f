/**
 * The provider emulator's public surface: the server for integration tests, and the pure rule
 * functions for unit tests and for building native content by hand.
 */
export { startProviderEmulator } from "./provider-emulator.js";
export type { EmulatedProvider, EmulatorRecord, ProviderEmulator, ProviderEmulatorOptions, TurnSource } from "./provider-emulator.js";
export {
  anthropicPrefixHash,
  anthropicTurnKey,
  buildAnthropicMessage,
  checkAnthropicRequest,
  sealRedactedThinking,
  signThinking,
  THINKING_BINDING_BETA,
} from "./anthropic-rules.js";
export type { AnthropicBlockRef, AnthropicCheck, AnthropicDroppedBlock, AnthropicInputTransformation, AnthropicTurnScript } from "./anthropic-rules.js";
export { anthropicSseBody } from "./anthropic-stream.js";
export {
  buildOpenAIResponse,
  checkOpenAIResponsesRequest,
  expandItemReferences,
  normalizeResponsesItem,
  openAIPrefixHash,
  sealReasoning,
} from "./openai-responses-rules.js";
export type { OpenAIInputTransformation, OpenAIResponsesCheck, OpenAIResponsesTurnScript } from "./openai-responses-rules.js";
export { openAIResponsesSseBody } from "./openai-responses-stream.js";
export { buildGeminiResponse, checkGeminiRequest, geminiCurrentTurnStart, signGeminiPart } from "./gemini-rules.js";
export type { GeminiCheck, GeminiTurnScript } from "./gemini-rules.js";
export { createSigner, type Signer } from "./signing.js";
export { canonicalHash, canonicalJson } from "./canonical-json.js";
export {
  buildCompactionAnswer,
  checkCompactionRequest,
  COMPACTION_BETA,
  COMPACTION_MODELS,
  emulatedSummary,
  expandCompaction,
  modelInfo,
  signCompaction,
} from "./anthropic-compaction.js";
export type { CompactionRule, StoredCompaction } from "./anthropic-compaction.js";
export { buildCompactedResponse, expandCompactionWindow } from "./openai-compaction.js";
export type { StoredWindow } from "./openai-compaction.js";
