// @ts-check
// A message's native content in its timeline row (docs/inspector.md, "Native content"): the parts
// its text projection leaves out or only labels (reasoning, images, files, provider items). The
// content is untrusted: strings reach the page only as text nodes or attribute values, and an image
// is drawn only from a data: URL built here from a checked media type and base64 payload.
import { fmt, h } from "./dom.js";

/**
 * @typedef {import("../client/types.js").NativeContent} NativeContent
 * @typedef {Record<string, unknown>} Obj
 * @typedef {HTMLElement | null} Piece
 */

/** The only images the page draws: formats every browser decodes, none of which can hold script. */
const IMAGE_TYPE = /^image\/(png|jpeg|gif|webp)$/;
const BASE64 = /^[A-Za-z0-9+/=\s]*$/;
/** A raw item's JSON is clipped when expanded, so one huge provider item cannot stall the page. */
const RAW_CHARS = 20_000;
/** Reasoning text longer than this is clipped until "show all" is clicked. */
const REASONING_CHARS = 4_000;

/** @param {unknown} v @returns {v is Obj} */
const isObj = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
/** @param {unknown} v */
const str = (v) => (typeof v === "string" ? v : "");

/**
 * The native parts of a message worth drawing beside its text, or null when it has none (text,
 * tool calls and tool results are already in the row through the projection).
 * @param {NativeContent | undefined} native
 * @returns {HTMLElement | null}
 */
export function nativeNode(native) {
  if (!native || !Array.isArray(native.content) || !Object.hasOwn(PARTS, native.format)) return null;
  const each = PARTS[native.format];
  if (!each) return null;
  /** @type {HTMLElement[]} */
  const pieces = [];
  for (const part of native.content) {
    if (!isObj(part)) continue;
    for (const p of each(part)) if (p) pieces.push(p);
  }
  return pieces.length ? h("div", { class: "native", "data-format": native.format }, pieces) : null;
}

/** @type {Record<string, (part: Obj) => Piece[]>} */
const PARTS = {
  anthropic(b) {
    switch (b.type) {
      case "text":
      case "tool_use":
        return [];
      case "thinking":
        return [reasoning("Thinking", str(b.thinking))];
      case "redacted_thinking":
        return [encrypted("Redacted thinking", str(b.data))];
      case "tool_result":
        return Array.isArray(b.content) ? b.content.flatMap((c) => (isObj(c) ? anthropicNested(c) : [])) : [];
      case "image":
        return [anthropicImage(b)];
      case "document":
        return [fileChip("document", [str(b.title), isObj(b.source) ? str(b.source.media_type) : ""])];
      default:
        return [itemChip(typeName(b), b)];
    }
  },

  "openai-responses"(item) {
    const type = item.type ?? (item.role !== undefined ? "message" : undefined);
    switch (type) {
      case "message":
        return Array.isArray(item.content) ? item.content.flatMap((c) => (isObj(c) ? openaiNested(c) : [])) : [];
      case "function_call":
      case "custom_tool_call":
        return [];
      case "function_call_output":
      case "custom_tool_call_output":
        return Array.isArray(item.output) ? item.output.flatMap((c) => (isObj(c) ? openaiNested(c) : [])) : [];
      case "reasoning":
        return [openaiReasoning(item)];
      case "input_image":
      case "input_file":
        return openaiNested(item);
      default:
        return [itemChip(typeName(item), item)];
    }
  },

  gemini(part) {
    if (typeof part.text === "string") {
      return part.thought === true ? [reasoning("Thinking", part.text)] : [];
    }
    if (isObj(part.functionCall) || isObj(part.functionResponse)) return [];
    if (isObj(part.inlineData)) {
      const mime = str(part.inlineData.mimeType);
      return [image(mime, part.inlineData.data) ?? fileChip("file", [mime])];
    }
    if (isObj(part.fileData)) return [fileChip("file", [str(part.fileData.mimeType), str(part.fileData.fileUri)])];
    if (typeof part.thoughtSignature === "string") {
      const other = Object.keys(part).filter((k) => k !== "thoughtSignature");
      if (other.length === 0) return [encrypted("Thought signature", part.thoughtSignature)];
    }
    return [itemChip(Object.keys(part).find((k) => k !== "thoughtSignature") ?? "part", part)];
  },

  "ai-sdk"(p) {
    switch (p.type) {
      case "text":
        return [];
      case "reasoning": {
        const text = str(p.text);
        const anthropic = isObj(p.providerOptions) && isObj(p.providerOptions.anthropic) ? p.providerOptions.anthropic : {};
        const redacted = str(anthropic.redactedData);
        if (!text && redacted) return [encrypted("Redacted reasoning", redacted)];
        return [reasoning("Reasoning", text)];
      }
      case "file":
        return [image(str(p.mediaType), p.data) ?? fileChip("file", [str(p.filename), str(p.mediaType)])];
      case "image": {
        const mediaType = str(p.mediaType) || str(p.mimeType);
        return [image(mediaType, p.image) ?? fileChip("image", [mediaType])];
      }
      case "tool-call":
        return p.providerExecuted === true ? [itemChip(`tool-call · ${str(p.toolName)}`, p)] : [];
      case "tool-result": {
        if (p.providerExecuted === true) return [itemChip(`tool-result · ${str(p.toolName)}`, p)];
        const output = isObj(p.output) ? p.output : {};
        if (output.type !== "content" || !Array.isArray(output.value)) return [];
        return output.value.flatMap((c) => {
          if (!isObj(c) || typeof c.text === "string") return [];
          if (c.type === "media" || c.type === "image-data" || c.type === "file-data") {
            return [image(str(c.mediaType), c.data) ?? fileChip("file", [str(c.filename), str(c.mediaType)])];
          }
          return [itemChip(typeName(c), c)];
        });
      }
      default:
        return [itemChip(typeName(p), p)];
    }
  },
};

/** @param {Obj} c a block inside an Anthropic tool_result */
function anthropicNested(c) {
  if (c.type === "text") return [];
  if (c.type === "image") return [anthropicImage(c)];
  if (c.type === "document") return [fileChip("document", [str(c.title), isObj(c.source) ? str(c.source.media_type) : ""])];
  return [itemChip(typeName(c), c)];
}

/** @param {Obj} b */
function anthropicImage(b) {
  const source = isObj(b.source) ? b.source : {};
  const mediaType = str(source.media_type);
  if (source.type === "base64") return image(mediaType, source.data) ?? fileChip("image", [mediaType]);
  // A URL or a Files API id: the page loads nothing from hosts named in content.
  return fileChip("image", [str(source.type), str(source.url) || str(source.file_id)]);
}

/** @param {Obj} c a content part of a Responses message or tool output */
function openaiNested(c) {
  if (typeof c.text === "string") return [];
  if (c.type === "input_image") {
    const url = str(c.image_url);
    const data = /^data:([^;,]*);base64,/.exec(url);
    if (data) return [image(data[1] ?? "", url.slice(data[0].length)) ?? fileChip("image", [data[1] ?? ""])];
    return [fileChip("image", [url ? "url" : "", url || str(c.file_id)])];
  }
  if (c.type === "input_file") return [fileChip("file", [str(c.filename), str(c.file_id) || str(c.file_url)])];
  return [itemChip(typeName(c), c)];
}

/** @param {Obj} item */
function openaiReasoning(item) {
  const summary = (Array.isArray(item.summary) ? item.summary : []).map((s) => (isObj(s) ? str(s.text) : "")).filter(Boolean);
  const content = (Array.isArray(item.content) ? item.content : []).map((s) => (isObj(s) ? str(s.text) : "")).filter(Boolean);
  const text = (summary.length ? summary : content).join("\n\n");
  const ciphertext = str(item.encrypted_content);
  if (!text && ciphertext) return encrypted("Reasoning", ciphertext);
  return reasoning("Reasoning", text, ciphertext.length);
}

/** @param {Obj} o */
function typeName(o) {
  const type = str(o.type) || "item";
  const name = str(o.name);
  return name ? `${type} · ${name}` : type;
}

/**
 * Reasoning the provider let us read, collapsed: "Thinking · 1,234 chars".
 * @param {string} label
 * @param {string} text
 * @param {number} [encryptedChars] the ciphertext beside it (OpenAI's encrypted_content)
 */
function reasoning(label, text, encryptedChars = 0) {
  const facts = [label, text ? `${fmt(text.length)} chars` : "empty"];
  if (encryptedChars) facts.push(`encrypted, ${fmt(encryptedChars)} chars`);
  return h(
    "details",
    { class: "native-reasoning" },
    h("summary", {}, facts.join(" · ")),
    text ? clipped(text, REASONING_CHARS, "reasoning-text") : null,
  );
}

/**
 * Reasoning only its provider can read: its size, and the ciphertext itself only on request.
 * @param {string} label
 * @param {string} ciphertext
 */
function encrypted(label, ciphertext) {
  return lazyDetails("native-reasoning encrypted", `${label} · encrypted, ${fmt(ciphertext.length)} chars`, () =>
    h("div", { class: "native-raw" }, ciphertext.length > RAW_CHARS ? `${ciphertext.slice(0, RAW_CHARS)}…` : ciphertext),
  );
}

/**
 * A thumbnail, or null when the media type or payload is not one the page draws.
 * @param {string} mediaType
 * @param {unknown} data base64
 */
function image(mediaType, data) {
  if (!IMAGE_TYPE.test(mediaType) || typeof data !== "string" || !data || !BASE64.test(data)) return null;
  const base64 = data.replace(/\s+/g, "");
  const img = h("img", {
    class: "native-image",
    src: `data:${mediaType};base64,${base64}`,
    alt: mediaType,
    title: `${mediaType}, ${fmt(Math.floor((base64.length * 3) / 4))} bytes (click to enlarge)`,
    loading: "lazy",
    decoding: "async",
    onclick: () => img.classList.toggle("zoomed"),
  });
  return img;
}

/**
 * A document or file (or an image the page does not draw), as a labelled chip.
 * @param {string} kind
 * @param {string[]} facts
 */
function fileChip(kind, facts) {
  const shown = facts.filter(Boolean);
  return h("span", { class: "native-chip file", "data-type": kind, title: shown.join(" · ") || undefined }, [kind, ...shown.map((f) => f.slice(0, 80))].join(" · "));
}

/**
 * A provider item the page does not draw: its type name, and its raw JSON on request.
 * @param {string} label
 * @param {Obj} raw
 */
function itemChip(label, raw) {
  return lazyDetails("native-item", h("span", { class: "native-chip", "data-type": str(raw.type) || label }, label), () => {
    const json = JSON.stringify(raw, null, 2) ?? "";
    return h("pre", { class: "native-raw" }, json.length > RAW_CHARS ? `${json.slice(0, RAW_CHARS)}\n… (${fmt(json.length)} characters in all)` : json);
  });
}

/**
 * A collapsed <details> whose body is built the first time it opens: rows that are drawn but never
 * expanded pay nothing for a large item.
 * @param {string} cls
 * @param {string | HTMLElement} summary
 * @param {() => HTMLElement} body
 */
function lazyDetails(cls, summary, body) {
  const details = /** @type {HTMLDetailsElement} */ (h("details", { class: cls }, h("summary", {}, summary)));
  details.addEventListener("toggle", function fill() {
    if (!details.open) return;
    details.removeEventListener("toggle", fill);
    details.append(body());
  });
  return details;
}

/**
 * Text clipped to `max` characters with a button that shows all of it.
 * @param {string} text
 * @param {number} max
 * @param {string} cls
 */
function clipped(text, max, cls) {
  if (text.length <= max) return h("div", { class: cls }, text);
  const body = h("span", {}, `${text.slice(0, max)}…`);
  const more = h(
    "button",
    {
      type: "button",
      class: "link more",
      onclick: () => {
        body.textContent = text;
        more.remove();
      },
    },
    `show all (${fmt(text.length)} characters)`,
  );
  return h("div", { class: cls }, body, " ", more);
}
