/** The engine-side client of Vancetope Memory: the HTTP client, the wire types, the prompt helpers (OpenAI Chat and Responses, Anthropic, Gemini). */
export { createMemoryClient, MemoryApiError, type MemoryClient, type MemoryClientOptions, type RequestOptions } from "./memory-client.js";
export {
  CONTINUATION_TEXT,
  toAnthropicRequest,
  toOpenAIMessages,
  type AnthropicContentBlock,
  type AnthropicMessage,
  type AnthropicOptions,
  type AnthropicRequest,
  type AnthropicTextBlock,
  type AnthropicToolResultBlock,
  type AnthropicToolUseBlock,
  type OpenAIChatMessage,
  type OpenAIToolCall,
  type PromptOptions,
  type TurnLike,
} from "./prompt-helpers.js";
export { toOpenAIResponsesInput, type OpenAIResponsesItem } from "./openai-responses-input.js";
export { toGeminiContents, type GeminiContent, type GeminiPart, type GeminiRequest } from "./gemini-contents.js";
export type * from "./types.js";
export type * from "./input-types.js";
