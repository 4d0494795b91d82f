// Generated from docs/openapi.json by `npm run openapi:types` (openapi-typescript). Do not edit.

export interface paths {
    "/health": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Liveness check */
        get: operations["health"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This document */
        get: operations["getOpenApiDocument"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/processes/{processId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read a process */
        get: operations["getProcess"];
        /** Create or update a process */
        put: operations["upsertProcess"];
        post?: never;
        /**
         * Erase a process and every item of it
         * @description A deleted id is never used again (a PUT of it is 409 process.deleted). docs/api.md, "Deleting a process".
         */
        delete: operations["deleteProcess"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/processes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List processes, newest first */
        get: operations["listProcesses"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/processes/{processId}/export": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Export a process as NDJSON, page by page
         * @description Repeat with the Export-Next-Cursor header as `cursor` until a page comes without it; the pages, concatenated, are the export. docs/api.md, "Export and import".
         */
        get: operations["exportProcess"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/processes/{processId}/import": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Import an export into a new process
         * @description The whole file is validated before anything is written; a fault names its line (`details.line`). docs/api.md, "Export and import".
         */
        post: operations["importProcess"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/processes/{processId}/messages": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List messages, oldest first */
        get: operations["listMessages"];
        put?: never;
        /** Append a message */
        post: operations["appendMessage"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/processes/{processId}/messages/{messageId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Read one message in full */
        get: operations["getMessage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /** Set or remove a message's strength */
        patch: operations["setMessageStrength"];
        trace?: never;
    };
    "/v1/processes/{processId}/compaction": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Compact now
         * @description Answers 200 when the fold completes within the manual budget (20 s by default), else 202 while the worker finishes it.
         */
        post: operations["compact"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/processes/{processId}/compaction/range": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Fold the messages of a time range */
        post: operations["compactRange"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/processes/{processId}/context": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The memory block a turn would replay */
        get: operations["getContext"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/processes/{processId}/turns": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * One engine turn: append, compact when due, answer what to send
         * @description Send `context.block` as the system prompt (cache breakpoint after `context.staticBlock`) and `messages` as the conversation. `model.contextWindow` may be omitted for models the service knows. docs/turns.md.
         */
        post: operations["runTurn"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/processes/{processId}/memories": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List a process's memories, newest first */
        get: operations["listMemories"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/processes/{processId}/memories/{memoryId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One memory with its loss report and provenance */
        get: operations["getMemory"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/processes/{processId}/memories/{memoryId}/sources": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The messages a summary folded */
        get: operations["getMemorySources"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/processes/{processId}/memories/{memoryId}/revert": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Undo the newest compaction
         * @description Only the newest active summary can be undone; the memory stays, REVERTED, for audit. docs/compaction.md, "Undoing a compaction".
         */
        post: operations["revertMemory"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/processes/{processId}/history/search": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Full-text search over every message */
        get: operations["searchHistory"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/settings": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Compaction tunables of the tenant or a project */
        get: operations["getSettings"];
        /** Override compaction tunables */
        put: operations["putSettings"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/inbox": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List inbox offers */
        get: operations["listInbox"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/inbox/{itemId}/answer": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Accept or decline an offer */
        post: operations["answerInboxItem"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/local/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Events the service published (local runner only) */
        get: operations["localListEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/local/eventbridge": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** EventBridge PutEvents, AWS JSON 1.1 (local runner only) */
        post: operations["localPutEvents"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        AnswerInput: {
            accepted: boolean;
        };
        AwsJsonError: {
            __type: string;
            message: string;
        };
        CompactionAnswer: {
            /** @enum {string} */
            mode: "NONE" | "SOFT" | "HARD" | "EMERGENCY";
            compacted: boolean;
            memoryId?: string;
            compactedMessages: number;
            tokensBefore: number;
            tokensAfter: number;
            reason?: string;
            trimmed?: {
                messages: number;
                tokens: number;
                fromMessageId?: string;
                toMessageId?: string;
            };
            clearedMessages?: number;
            fold?: {
                by: string;
                /** @enum {string} */
                kind: "service" | "provider";
                block: boolean;
                inputTokens: number;
                outputTokens: number;
                ms: number;
            };
            window: {
                tokens: number;
                /** @enum {string} */
                source: "request" | "model" | "setting";
                model?: string;
            };
        };
        CompactionInput: {
            model: {
                provider?: string;
                name?: string;
                contextWindow?: number;
            };
            prompt?: {
                tokens?: number;
                chars?: number;
                text?: string;
            };
            /** @enum {string} */
            force?: "SOFT" | "HARD" | "EMERGENCY";
            instructions?: string;
        };
        Context: {
            block: string;
            sections: {
                name: string;
                content: string;
                /** @enum {string} */
                cache: "static" | "dynamic";
            }[];
            staticBlock: string;
        };
        DeletingAnswer: {
            /** @constant */
            status: "deleting";
        };
        Error400: {
            error: {
                /** @enum {string} */
                code: "request.invalid" | "request.malformed_json" | "request.malformed_text" | "cursor.invalid" | "model.context_window_invalid" | "summarizer.cap_too_small" | "tunables.summarizer_window_too_small" | "range.invalid" | "tunables.invalid" | "import.invalid_line" | "import.version_unsupported" | "import.truncated" | "import.foreign_line" | "import.duplicate_id" | "import.dangling_reference" | "import.changed" | "import.inconsistent" | "model.context_window_required" | "memory.no_block";
                message: string;
                details?: {
                    [key: string]: unknown;
                };
            };
        };
        Error401: {
            error: {
                /** @enum {string} */
                code: "auth.invalid_key";
                message: string;
                details?: {
                    [key: string]: unknown;
                };
            };
        };
        Error404: {
            error: {
                /** @enum {string} */
                code: "route.not_found" | "process.not_found" | "message.not_found" | "memory.not_found" | "inbox_item.not_found" | "inbox item.not_found";
                message: string;
                details?: {
                    [key: string]: unknown;
                };
            };
        };
        Error409: {
            error: {
                /** @enum {string} */
                code: "process.exists" | "process.deleted" | "process.importing" | "export.changed" | "process.busy" | "message.archived" | "message.busy" | "memory.not_newest" | "memory.failed" | "memory.reverted" | "memory.originals_expired" | "inbox.already_answered" | "compaction.retry_later" | "idempotency.key_reused";
                message: string;
                details?: {
                    [key: string]: unknown;
                };
            };
        };
        Error413: {
            error: {
                /** @enum {string} */
                code: "request.too_large" | "message.too_large" | "message.too_many_parts" | "store.item_too_large" | "turn.answer_too_large" | "import.too_many_items";
                message: string;
                details?: {
                    [key: string]: unknown;
                };
            };
        };
        Error429: {
            error: {
                /** @enum {string} */
                code: "rate.limited" | "budget.exceeded" | "import.rate_limited";
                message: string;
                details?: {
                    [key: string]: unknown;
                };
            };
        };
        Error500: {
            error: {
                /** @enum {string} */
                code: "internal";
                message: string;
                details?: {
                    [key: string]: unknown;
                };
            };
        };
        ExportLine: {
            /** @constant */
            format: "vancetope-memory-export";
            /** @enum {number} */
            version: 1 | 2;
            processId: string;
            /** Format: date-time */
            exportedAt: string;
        } | ({
            /** @constant */
            kind: "process";
            process: {
                processId: string;
                projectId: string;
                sessionId?: string;
                parentProcessId?: string;
                name?: string;
                recipe?: string;
                engine?: string;
                title?: string;
                allowsCrossProjectSpawn: boolean;
                /** Format: date-time */
                createdAt: string;
                conversation?: {
                    system?: unknown;
                    tools?: unknown[];
                };
            };
            activeSummaryId: string | null;
        } | {
            /** @constant */
            kind: "message";
            message: {
                id: string;
                processId: string;
                /** @enum {string} */
                role: "USER" | "ASSISTANT" | "SYSTEM" | "TOOL";
                content: string;
                tags: string[];
                /** Format: date-time */
                createdAt: string;
                archivedInMemoryId: string | null;
                toolCallId?: string;
                toolCalls?: {
                    id: string;
                    name: string;
                    arguments: string;
                }[];
                tokens: number;
                cleared?: {
                    /** Format: date-time */
                    at: string;
                    toolName: string;
                    chars: number;
                    tokens: number;
                    epoch?: number;
                    errors?: string[];
                };
                /** Format: date-time */
                expiresAt?: string;
                native?: {
                    /** @enum {string} */
                    format: "anthropic" | "openai-responses" | "gemini" | "ai-sdk";
                    content: unknown[];
                };
                toolCallIds?: string[];
            };
        } | {
            /** @constant */
            kind: "memory";
            memory: {
                id: string;
                processId: string;
                /** @enum {string} */
                kind: "ARCHIVED_CHAT";
                /** @enum {string} */
                status: "OK" | "FAILED" | "REVERTED" | "QUEUED" | "PREPARED" | "DISCARDED";
                content: string;
                sourceRefs: string[];
                metadata: {
                    compactedMessages: number;
                    provider: string;
                    model: string;
                    supersededMemoryId?: string;
                    recompaction?: boolean;
                    topicLabel?: string;
                    /** Format: date-time */
                    rangeFromAt?: string;
                    /** Format: date-time */
                    rangeToAt?: string;
                    error?: string;
                    /** @enum {string} */
                    mode?: "SOFT" | "HARD" | "EMERGENCY" | "RANGE";
                    usage?: {
                        inputTokens?: number;
                        outputTokens?: number;
                    };
                    tokensBefore?: number;
                    tokensAfter?: number;
                    summarizerCalls?: number;
                    loss?: {
                        units: number;
                        kept: number;
                        dropped: {
                            text: string;
                            messageIds: string[];
                        }[];
                        ledger?: {
                            items: number;
                            listed: number;
                        };
                    };
                    ledger?: {
                        text: string;
                        tokens: number;
                        budgetTokens: number;
                        files: number;
                        commands: number;
                        errors: number;
                        openErrors: number;
                        constraints: number;
                    };
                    qualityGate?: {
                        check: string;
                        detail?: string;
                        attempts: number;
                    };
                    truncated?: boolean;
                    fallback?: {
                        summarizer: string;
                        reason: string;
                    };
                    strengthAnalyzer?: {
                        analyzer: string;
                        tagged: number;
                        usage?: {
                            inputTokens?: number;
                            outputTokens?: number;
                        };
                        error?: string;
                    };
                    summarizerMs?: number;
                    /** @enum {string} */
                    producedBy?: "inline" | "prepared" | "worker";
                    /** @enum {string} */
                    preparedFor?: "SOFT" | "HARD" | "EMERGENCY" | "RANGE";
                    /** @enum {string} */
                    job?: "prepare" | "manual" | "range";
                    inboxItemId?: string;
                    /** Format: date-time */
                    queuedAt?: string;
                    /** Format: date-time */
                    preparedAt?: string;
                    extended?: {
                        messages: number;
                        /** Format: date-time */
                        at: string;
                    };
                    /** Format: date-time */
                    expiresAt?: string;
                    contextWindow?: number;
                    /** @enum {string} */
                    foldUnit?: "tool_group" | "turn";
                    queuedAtVersion?: number;
                    forced?: boolean;
                    instructions?: string;
                    discardReason?: string;
                    /** Format: date-time */
                    discardedAt?: string;
                    markerMessageId?: string;
                    /** Format: date-time */
                    revertedAt?: string;
                    retentionDays?: number;
                    providerFold?: {
                        /** @enum {string} */
                        format: "anthropic" | "openai-responses" | "gemini" | "ai-sdk";
                        block: boolean;
                        note?: string;
                        covered?: string[];
                        refused?: {
                            at: string;
                            error?: string;
                        };
                    };
                };
                /** Format: date-time */
                createdAt: string;
                supersededAt: string | null;
                supersededByMemoryId?: string;
                tokens: number;
                citations?: string[][];
                droppedUnits?: {
                    text: string;
                    messageIds: string[];
                }[];
                keepUnits?: string[];
                ledger?: {
                    files: {
                        path: string;
                        /** @enum {string} */
                        op: "read" | "created" | "edited" | "deleted";
                        messageId: string;
                    }[];
                    commands: {
                        command: string;
                        outcome: string;
                        messageId: string;
                        resultId?: string;
                        runs: number;
                    }[];
                    errors: {
                        text: string;
                        messageId: string;
                        source?: string;
                        resolvedBy?: string;
                    }[];
                    constraints: {
                        text: string;
                        messageId: string;
                    }[];
                    pending: {
                        callId: string;
                        command?: string;
                        source: string;
                        /** @constant */
                        reads?: true;
                    }[];
                    evicted: {
                        files: number;
                        commands: number;
                        errors: number;
                        constraints: number;
                    };
                };
                native?: {
                    /** @enum {string} */
                    format: "anthropic" | "openai-responses" | "gemini" | "ai-sdk";
                    content: unknown[];
                };
                nativeBlob?: unknown;
            };
        } | {
            /** @constant */
            kind: "settings";
            projectId: string;
            overrides: {
                [key: string]: unknown;
            };
        } | {
            /** @constant */
            kind: "end";
            messages: number;
            memories: number;
        });
        GatewayMessage: {
            message: string;
        };
        Health: {
            /** @constant */
            ok: true;
        };
        ImportAnswer: {
            process: components["schemas"]["Process"];
            messages: number;
            memories: number;
            /** @enum {string} */
            settings: "restored" | "kept" | "refused" | "none";
        };
        InboxItem: {
            id: string;
            processId: string;
            /** @constant */
            type: "APPROVAL";
            tags: string[];
            /** @enum {string} */
            status: "OPEN" | "ACCEPTED" | "DECLINED";
            payload: {
                from: string;
                to: string;
                topicLabel: string;
            };
            createdAt: string;
            answeredAt?: string;
            rangeJobId?: string;
        };
        InboxItemAnswer: {
            item: components["schemas"]["InboxItem"];
        };
        InboxList: {
            items: components["schemas"]["InboxItem"][];
        };
        ListedMemory: {
            id: string;
            processId: string;
            /** @enum {string} */
            kind: "ARCHIVED_CHAT";
            /** @enum {string} */
            status: "OK" | "FAILED" | "REVERTED" | "QUEUED" | "PREPARED" | "DISCARDED";
            content: string;
            sourceRefs: string[];
            metadata: components["schemas"]["MemoryMetadata"];
            createdAt: string;
            supersededAt: string | null;
            supersededByMemoryId?: string;
            tokens: number;
            native?: {
                /** @enum {string} */
                format: "anthropic" | "openai-responses" | "gemini" | "ai-sdk";
                content: unknown[];
            };
            nativeBlob?: {
                /** @enum {string} */
                format: "anthropic" | "openai-responses" | "gemini" | "ai-sdk";
                sha256: string;
                bytes: number;
            };
        };
        LocalEvents: {
            items: {
                source: string;
                detailType: string;
                detail: {
                    [key: string]: unknown;
                };
                time: string;
            }[];
        };
        Memory: {
            id: string;
            processId: string;
            /** @enum {string} */
            kind: "ARCHIVED_CHAT";
            /** @enum {string} */
            status: "OK" | "FAILED" | "REVERTED" | "QUEUED" | "PREPARED" | "DISCARDED";
            content: string;
            sourceRefs: string[];
            metadata: components["schemas"]["MemoryMetadata"];
            createdAt: string;
            supersededAt: string | null;
            supersededByMemoryId?: string;
            tokens: number;
            citations?: string[][];
            droppedUnits?: {
                text: string;
                messageIds: string[];
            }[];
            keepUnits?: string[];
            ledger?: {
                files: {
                    path: string;
                    /** @enum {string} */
                    op: "read" | "created" | "edited" | "deleted";
                    messageId: string;
                }[];
                commands: {
                    command: string;
                    outcome: string;
                    messageId: string;
                    resultId?: string;
                    runs: number;
                }[];
                errors: {
                    text: string;
                    messageId: string;
                    source?: string;
                    resolvedBy?: string;
                }[];
                constraints: {
                    text: string;
                    messageId: string;
                }[];
                pending: {
                    callId: string;
                    command?: string;
                    source: string;
                    /** @constant */
                    reads?: true;
                }[];
                evicted: {
                    files: number;
                    commands: number;
                    errors: number;
                    constraints: number;
                };
            };
            native?: {
                /** @enum {string} */
                format: "anthropic" | "openai-responses" | "gemini" | "ai-sdk";
                content: unknown[];
            };
            nativeBlob?: {
                /** @enum {string} */
                format: "anthropic" | "openai-responses" | "gemini" | "ai-sdk";
                sha256: string;
                bytes: number;
            };
        };
        MemoryDetail: {
            memory: components["schemas"]["ListedMemory"];
            loss: {
                units: number;
                kept: number;
                dropped: {
                    text: string;
                    messageIds: string[];
                }[];
            } | null;
            provenance: {
                line: number;
                text: string;
                messageIds: string[];
            }[];
            ledger: {
                files: {
                    path: string;
                    /** @enum {string} */
                    op: "read" | "created" | "edited" | "deleted";
                    messageId: string;
                }[];
                commands: {
                    command: string;
                    outcome: string;
                    messageId: string;
                    resultId?: string;
                    runs: number;
                }[];
                errors: {
                    text: string;
                    messageId: string;
                    source?: string;
                    resolvedBy?: string;
                }[];
                constraints: {
                    text: string;
                    messageId: string;
                }[];
                pending: {
                    callId: string;
                    command?: string;
                    source: string;
                    /** @constant */
                    reads?: true;
                }[];
                evicted: {
                    files: number;
                    commands: number;
                    errors: number;
                    constraints: number;
                };
            } | null;
        };
        MemoryList: {
            items: components["schemas"]["ListedMemory"][];
        };
        MemoryMetadata: {
            compactedMessages: number;
            provider: string;
            model: string;
            supersededMemoryId?: string;
            recompaction?: boolean;
            topicLabel?: string;
            rangeFromAt?: string;
            rangeToAt?: string;
            error?: string;
            /** @enum {string} */
            mode?: "SOFT" | "HARD" | "EMERGENCY" | "RANGE";
            usage?: {
                inputTokens?: number;
                outputTokens?: number;
            };
            tokensBefore?: number;
            tokensAfter?: number;
            summarizerCalls?: number;
            loss?: {
                units: number;
                kept: number;
                dropped: {
                    text: string;
                    messageIds: string[];
                }[];
                ledger?: {
                    items: number;
                    listed: number;
                };
            };
            ledger?: {
                text: string;
                tokens: number;
                budgetTokens: number;
                files: number;
                commands: number;
                errors: number;
                openErrors: number;
                constraints: number;
            };
            qualityGate?: {
                check: string;
                detail?: string;
                attempts: number;
            };
            truncated?: boolean;
            fallback?: {
                summarizer: string;
                reason: string;
            };
            strengthAnalyzer?: {
                analyzer: string;
                tagged: number;
                usage?: {
                    inputTokens?: number;
                    outputTokens?: number;
                };
                error?: string;
            };
            summarizerMs?: number;
            /** @enum {string} */
            producedBy?: "inline" | "prepared" | "worker";
            /** @enum {string} */
            preparedFor?: "SOFT" | "HARD" | "EMERGENCY" | "RANGE";
            /** @enum {string} */
            job?: "prepare" | "manual" | "range";
            inboxItemId?: string;
            queuedAt?: string;
            preparedAt?: string;
            extended?: {
                messages: number;
                at: string;
            };
            expiresAt?: string;
            contextWindow?: number;
            /** @enum {string} */
            foldUnit?: "tool_group" | "turn";
            queuedAtVersion?: number;
            forced?: boolean;
            instructions?: string;
            discardReason?: string;
            discardedAt?: string;
            markerMessageId?: string;
            revertedAt?: string;
            retentionDays?: number;
            providerFold?: {
                /** @enum {string} */
                format: "anthropic" | "openai-responses" | "gemini" | "ai-sdk";
                block: boolean;
                note?: string;
                covered?: string[];
                refused?: {
                    at: string;
                    error?: string;
                };
            };
        };
        MemorySources: {
            memory: components["schemas"]["Memory"];
            items: components["schemas"]["Message"][];
            expired: string[];
        };
        Message: {
            id: string;
            processId: string;
            /** @enum {string} */
            role: "USER" | "ASSISTANT" | "SYSTEM" | "TOOL";
            content: string;
            tags: string[];
            createdAt: string;
            archivedInMemoryId: string | null;
            toolCallId?: string;
            toolCalls?: {
                id: string;
                name: string;
                arguments: string;
            }[];
            tokens: number;
            cleared?: {
                at: string;
                toolName: string;
                chars: number;
                tokens: number;
                epoch?: number;
                errors?: string[];
            };
            /** @constant */
            missingResult?: true;
            expiresAt?: string;
            native?: {
                /** @enum {string} */
                format: "anthropic" | "openai-responses" | "gemini" | "ai-sdk";
                content: unknown[];
            };
            toolCallIds?: string[];
        };
        MessageAnswer: {
            message: components["schemas"]["Message"];
        };
        MessageInput: {
            /** @enum {string} */
            role?: "USER" | "ASSISTANT" | "SYSTEM" | "TOOL" | "user" | "assistant" | "system" | "tool";
            content?: string;
            tags?: string[];
            idempotencyKey?: string;
            toolCallId?: string;
            toolCalls?: {
                id: string;
                name: string;
                arguments: string;
            }[];
            native?: {
                /** @enum {string} */
                format: "anthropic" | "openai-responses" | "gemini" | "ai-sdk";
                content: unknown[];
            };
        };
        MessagePage: {
            items: components["schemas"]["Message"][];
            nextCursor?: string;
        };
        Process: {
            processId: string;
            projectId: string;
            sessionId?: string;
            parentProcessId?: string;
            name?: string;
            recipe?: string;
            engine?: string;
            title?: string;
            allowsCrossProjectSpawn: boolean;
            createdAt: string;
            conversation?: {
                system?: unknown;
                tools?: unknown[];
            };
        };
        ProcessAnswer: {
            process: components["schemas"]["Process"];
            lastTurn?: {
                at: string;
                window: {
                    tokens: number;
                    /** @enum {string} */
                    source: "request" | "model" | "setting";
                    model?: string;
                };
                summaryId: string | null;
                version: number;
                replay?: {
                    epoch: number;
                    format: string;
                    head: string;
                    recall: string;
                    trim?: string;
                    cleared: number;
                    open: string[] | null;
                    since?: string;
                };
                /** @constant */
                foldUnit?: "turn";
            };
        };
        ProcessInput: {
            projectId: string;
            sessionId?: string;
            parentProcessId?: string;
            name?: string;
            recipe?: string;
            engine?: string;
            title?: string;
            allowsCrossProjectSpawn?: boolean;
            conversation?: {
                system?: unknown;
                tools?: unknown[];
            };
        };
        ProcessPage: {
            items: components["schemas"]["Process"][];
            nextCursor?: string;
        };
        PutEventsAnswer: {
            FailedEntryCount: number;
            Entries: {
                EventId?: string;
                ErrorCode?: string;
                ErrorMessage?: string;
            }[];
        };
        PutEventsInput: {
            Entries: {
                Source?: string;
                DetailType?: string;
                Detail?: string;
                EventBusName?: string;
            }[];
        };
        RangeAnswer: {
            memoryId: string | null;
            compactedMessages: number;
            markerMessageId: string | null;
            reason?: string;
        };
        RangeInput: {
            /** Format: date-time */
            from: string;
            /** Format: date-time */
            to: string;
            topicLabel: string;
        };
        RevertAnswer: {
            memory: components["schemas"]["Memory"];
            restoredMessages: number;
            activeSummaryId: string | null;
        };
        SearchAnswer: {
            items: {
                message: components["schemas"]["Message"];
                score: number;
            }[];
        };
        Settings: {
            overrides: components["schemas"]["TunablesOverride"];
            effective: components["schemas"]["Tunables"];
        };
        SettingsInput: {
            softThreshold?: number;
            hardThreshold?: number;
            prepareThreshold?: number;
            emergencyThreshold?: number;
            keepRecent?: number;
            softAnchor?: number;
            hardAnchor?: number;
            emergencyAnchor?: number;
            maxSourceChars?: number;
            summaryMinTokens?: number;
            summaryMaxTokens?: number;
            summaryWindowShare?: number;
            softMinFoldTokens?: number;
            foldTarget?: number;
            foldMinRoomTokens?: number;
            recallMaxTokens?: number;
            recallInSystem?: boolean;
            summarizerConcurrency?: number;
            maxSummarizerCalls?: number;
            foldCurrentTurn?: number;
            clearThreshold?: number;
            keepToolResults?: number;
            clearMinResultTokens?: number;
            clearMinSaving?: number;
            sideChannelEnabled?: boolean;
            inlineOnCompaction?: boolean;
            retentionDays?: number | null;
            maxPromptTokens?: number | null;
            ledgerWindowShare?: number;
            ledgerMaxTokens?: number;
            ledgerTools?: {
                [key: string]: "read" | "create" | "edit" | "delete" | "command" | "patch" | "search" | "ignore";
            };
        };
        StrengthInput: {
            strength: ("weak" | "normal" | "strong" | "pinned") | null;
        };
        Tunables: {
            softThreshold: number;
            hardThreshold: number;
            prepareThreshold: number;
            emergencyThreshold: number;
            keepRecent: number;
            softAnchor: number;
            hardAnchor: number;
            emergencyAnchor: number;
            maxSourceChars: number;
            summaryMinTokens: number;
            summaryMaxTokens: number;
            summaryWindowShare: number;
            softMinFoldTokens: number;
            foldTarget: number;
            foldMinRoomTokens: number;
            recallMaxTokens: number;
            recallInSystem: boolean;
            summarizerConcurrency: number;
            maxSummarizerCalls: number;
            foldCurrentTurn: number;
            clearThreshold: number;
            keepToolResults: number;
            clearMinResultTokens: number;
            clearMinSaving: number;
            sideChannelEnabled: boolean;
            inlineOnCompaction: boolean;
            retentionDays?: number | null;
            maxPromptTokens?: number | null;
            ledgerWindowShare: number;
            ledgerMaxTokens: number;
            ledgerTools?: {
                [key: string]: "read" | "create" | "edit" | "delete" | "command" | "patch" | "search" | "ignore";
            };
        };
        TunablesOverride: {
            softThreshold?: number;
            hardThreshold?: number;
            prepareThreshold?: number;
            emergencyThreshold?: number;
            keepRecent?: number;
            softAnchor?: number;
            hardAnchor?: number;
            emergencyAnchor?: number;
            maxSourceChars?: number;
            summaryMinTokens?: number;
            summaryMaxTokens?: number;
            summaryWindowShare?: number;
            softMinFoldTokens?: number;
            foldTarget?: number;
            foldMinRoomTokens?: number;
            recallMaxTokens?: number;
            recallInSystem?: boolean;
            summarizerConcurrency?: number;
            maxSummarizerCalls?: number;
            foldCurrentTurn?: number;
            clearThreshold?: number;
            keepToolResults?: number;
            clearMinResultTokens?: number;
            clearMinSaving?: number;
            sideChannelEnabled?: boolean;
            inlineOnCompaction?: boolean;
            retentionDays?: number | null;
            maxPromptTokens?: number | null;
            ledgerWindowShare?: number;
            ledgerMaxTokens?: number;
            ledgerTools?: {
                [key: string]: "read" | "create" | "edit" | "delete" | "command" | "patch" | "search" | "ignore";
            };
        };
        TurnAnswer: {
            compaction: {
                /** @enum {string} */
                mode: "NONE" | "SOFT" | "HARD" | "EMERGENCY";
                compacted: boolean;
                memoryId?: string;
                compactedMessages: number;
                tokensBefore: number;
                tokensAfter: number;
                reason?: string;
                trimmed?: {
                    messages: number;
                    tokens: number;
                    fromMessageId?: string;
                    toMessageId?: string;
                };
                clearedMessages?: number;
                fold?: {
                    by: string;
                    /** @enum {string} */
                    kind: "service" | "provider";
                    block: boolean;
                    inputTokens: number;
                    outputTokens: number;
                    ms: number;
                };
            };
            window: {
                tokens: number;
                /** @enum {string} */
                source: "request" | "model" | "setting";
                model?: string;
            };
            summaryId: string | null;
            sinceLastTurn?: {
                folds: string[];
                /** @constant */
                more?: true;
                /** @constant */
                reverted?: true;
            };
            overWindow?: {
                tokens: number;
                window: number;
                /** @enum {string} */
                reason: "message_larger_than_window" | "not_reduced";
                messageIds?: string[];
            };
            context: components["schemas"]["Context"];
            messages: components["schemas"]["Message"][];
            request?: {
                system: {
                    [key: string]: unknown;
                }[];
                messages: {
                    [key: string]: unknown;
                }[];
            } | {
                input: {
                    [key: string]: unknown;
                }[];
                prompt_cache_key?: string;
            } | {
                messages: {
                    [key: string]: unknown;
                }[];
                prompt_cache_key?: string;
            } | {
                contents: {
                    [key: string]: unknown;
                }[];
                systemInstruction?: {
                    [key: string]: unknown;
                };
            } | {
                prompt: {
                    [key: string]: unknown;
                }[];
            };
            prefix: {
                kept: boolean;
                /** @enum {string} */
                reason?: "first_turn" | "fold" | "revert" | "format" | "trim" | "clear" | "parent" | "recall" | "tool_result" | "block_refused";
                openLoop?: {
                    messageId: string;
                };
            };
            providerBlock?: {
                memoryId: string;
                /** @enum {string} */
                format: "anthropic" | "openai-responses" | "gemini" | "ai-sdk";
                sent: boolean;
                /** @enum {string} */
                reason?: "format" | "model" | "refused";
            };
            /** @constant */
            messagesWithoutNative?: true;
        };
        TurnInput: {
            message?: components["schemas"]["MessageInput"];
            model: {
                provider?: string;
                name?: string;
                contextWindow?: number;
            };
            prompt?: {
                tokens?: number;
                chars?: number;
                text?: string;
            };
            query?: string;
            /** @enum {string} */
            format?: "anthropic" | "openai-responses" | "gemini" | "ai-sdk" | "openai-chat";
            blockRefused?: {
                memoryId: string;
                error?: string;
            };
        };
    };
    responses: {
        /** @description Invalid input: `details.fields` names the fields at fault (`body.x`, `query.y`, `path.z`); nothing is written. */
        Error400: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "request.invalid",
                 *         "message": "invalid body: body.role: Invalid option: expected one of \"USER\"|\"ASSISTANT\"|\"SYSTEM\"|\"TOOL\"",
                 *         "details": {
                 *           "fields": [
                 *             "body.role"
                 *           ],
                 *           "issues": [
                 *             {
                 *               "field": "body.role",
                 *               "message": "Invalid option: expected one of \"USER\"|\"ASSISTANT\"|\"SYSTEM\"|\"TOOL\""
                 *             }
                 *           ]
                 *         }
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["Error400"];
            };
        };
        /** @description Missing or unknown API key. Deployed, API Gateway answers a missing Authorization header itself (`{ message: "Unauthorized" }`). */
        Error401: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "auth.invalid_key",
                 *         "message": "missing or unknown API key (Authorization: Bearer <key>)"
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["Error401"] | components["schemas"]["GatewayMessage"];
            };
        };
        /** @description Unknown process or item (also another tenant's, or a deleted process). */
        Error404: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "process.not_found",
                 *         "message": "process 'p-1' not found"
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["Error404"];
            };
        };
        /** @description A conflict with the process's state: `error.code` says which. */
        Error409: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "memory.not_newest",
                 *         "message": "only the newest active summary can be reverted; it is 'mem_01J0000000000000000000000'",
                 *         "details": {
                 *           "activeSummaryId": "mem_01J0000000000000000000000"
                 *         }
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["Error409"];
            };
        };
        /** @description A body over 400 KB (`request.too_large`) or a message over 200,000 bytes (`message.too_large`); `details.limit`. */
        Error413: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "request.too_large",
                 *         "message": "request body is 409601 bytes; the limit is 409600",
                 *         "details": {
                 *           "limit": 409600
                 *         }
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["Error413"];
            };
        };
        /** @description A limit of the tenant that resets with time (`Retry-After` seconds, also `details.retryAfterSeconds`); deployed, also API Gateway's stage throttle (`{ message }`). */
        Error429: {
            headers: {
                /** @description Seconds to wait before retrying. */
                "Retry-After"?: number;
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "rate.limited",
                 *         "message": "more than 20 requests per second for this tenant; retry after 1 s",
                 *         "details": {
                 *           "limit": 20,
                 *           "retryAfterSeconds": 1
                 *         }
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["Error429"] | components["schemas"]["GatewayMessage"];
            };
        };
        /** @description An internal error; no internals are shown. */
        Error500: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "internal",
                 *         "message": "internal error"
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["Error500"];
            };
        };
        /** @description Deployed only: the authorizer denied an unknown, revoked or malformed key (API Gateway's own answer). */
        GatewayForbidden: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "message": "Forbidden"
                 *     }
                 */
                "application/json": components["schemas"]["GatewayMessage"];
            };
        };
    };
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    health: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The service answers. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Health"];
                };
            };
        };
    };
    getOpenApiDocument: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The OpenAPI document of the contract. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, never>;
                };
            };
        };
    };
    getProcess: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                processId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The process. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProcessAnswer"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["GatewayForbidden"];
            404: components["responses"]["Error404"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    upsertProcess: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                processId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "projectId": "proj-1",
                 *       "name": "planner",
                 *       "engine": "my-engine"
                 *     }
                 */
                "application/json": components["schemas"]["ProcessInput"];
            };
        };
        responses: {
            /** @description The process as stored. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProcessAnswer"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["GatewayForbidden"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    deleteProcess: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                processId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A large process is being erased in the background; repeat the DELETE to follow it. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeletingAnswer"];
                };
            };
            /** @description Every item of the process is erased. */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["GatewayForbidden"];
            404: components["responses"]["Error404"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listProcesses: {
        parameters: {
            query?: {
                projectId?: string;
                limit?: number;
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of processes. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProcessPage"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["GatewayForbidden"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    exportProcess: {
        parameters: {
            query?: {
                cursor?: string;
            };
            header?: never;
            path: {
                processId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of the export: one JSON value per line (ExportLine), each ending in a line feed. */
            200: {
                headers: {
                    /** @description The cursor of the next page; absent on the last page. */
                    "Export-Next-Cursor"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/x-ndjson": string;
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["GatewayForbidden"];
            404: components["responses"]["Error404"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    importProcess: {
        parameters: {
            query?: {
                remapIds?: "true" | "false";
            };
            header?: never;
            path: {
                processId: string;
            };
            cookie?: never;
        };
        /** @description An export (NDJSON, an ExportLine per line), at most 400 KB and 1,000 messages and memories; a larger one through `npm run processes -- import`. */
        requestBody: {
            content: {
                "application/x-ndjson": string;
            };
        };
        responses: {
            /** @description The process written, how many messages and memories, and whether the project's settings were restored (only where the project had none). */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ImportAnswer"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["GatewayForbidden"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listMessages: {
        parameters: {
            query?: {
                view?: "active" | "all";
                limit?: number;
                cursor?: string;
            };
            header?: never;
            path: {
                processId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of messages. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MessagePage"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["GatewayForbidden"];
            404: components["responses"]["Error404"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    appendMessage: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                processId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "role": "USER",
                 *       "content": "Deploy the staging stack.",
                 *       "tags": [
                 *         "STRENGTH:strong"
                 *       ],
                 *       "idempotencyKey": "turn-42"
                 *     }
                 */
                "application/json": components["schemas"]["MessageInput"];
            };
        };
        responses: {
            /** @description The message stored earlier under the same idempotencyKey. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MessageAnswer"];
                };
            };
            /** @description The message as stored. */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MessageAnswer"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["GatewayForbidden"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    getMessage: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                processId: string;
                messageId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The message, active or archived. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MessageAnswer"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["GatewayForbidden"];
            404: components["responses"]["Error404"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    setMessageStrength: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                processId: string;
                messageId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "strength": "pinned"
                 *     }
                 */
                "application/json": components["schemas"]["StrengthInput"];
            };
        };
        responses: {
            /** @description The message with its one STRENGTH tag. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MessageAnswer"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["GatewayForbidden"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    compact: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                processId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "model": {
                 *         "provider": "openai",
                 *         "name": "gpt-4o",
                 *         "contextWindow": 128000
                 *       },
                 *       "prompt": {
                 *         "tokens": 90000
                 *       },
                 *       "force": "HARD"
                 *     }
                 */
                "application/json": components["schemas"]["CompactionInput"];
            };
        };
        responses: {
            /** @description The fold completed within the manual budget. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CompactionAnswer"];
                };
            };
            /** @description The fold is queued (reason compaction_queued); the worker finishes it. */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CompactionAnswer"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["GatewayForbidden"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    compactRange: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                processId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "from": "2026-05-01T10:00:00Z",
                 *       "to": "2026-05-01T11:00:00Z",
                 *       "topicLabel": "database migration"
                 *     }
                 */
                "application/json": components["schemas"]["RangeInput"];
            };
        };
        responses: {
            /** @description What was folded (or, with reason, why not). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RangeAnswer"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["GatewayForbidden"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    getContext: {
        parameters: {
            query?: {
                query?: string;
            };
            header?: never;
            path: {
                processId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The block and its sections. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Context"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["GatewayForbidden"];
            404: components["responses"]["Error404"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    runTurn: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                processId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "message": {
                 *         "role": "USER",
                 *         "content": "Next step?"
                 *       },
                 *       "model": {
                 *         "provider": "openai",
                 *         "name": "gpt-4o",
                 *         "contextWindow": 128000
                 *       },
                 *       "prompt": {
                 *         "tokens": 91000
                 *       },
                 *       "query": "staging deploy"
                 *     }
                 */
                "application/json": components["schemas"]["TurnInput"];
            };
        };
        responses: {
            /** @description What to send the model: the memory block and the active messages. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TurnAnswer"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["GatewayForbidden"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listMemories: {
        parameters: {
            query?: {
                kind?: "ARCHIVED_CHAT";
                includeSuperseded?: "true" | "false";
                includeFailed?: "true" | "false";
                includePrepared?: "true" | "false";
                includeReverted?: "true" | "false";
            };
            header?: never;
            path: {
                processId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The memories. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MemoryList"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["GatewayForbidden"];
            404: components["responses"]["Error404"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    getMemory: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                processId: string;
                memoryId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The memory in full. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MemoryDetail"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["GatewayForbidden"];
            404: components["responses"]["Error404"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    getMemorySources: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                processId: string;
                memoryId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The memory and its source messages. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["MemorySources"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["GatewayForbidden"];
            404: components["responses"]["Error404"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    revertMemory: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                processId: string;
                memoryId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The memory, now REVERTED, and what is active again. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RevertAnswer"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["GatewayForbidden"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    searchHistory: {
        parameters: {
            query: {
                q: string;
                tag?: string;
                limit?: number;
            };
            header?: never;
            path: {
                processId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The best matches, archived messages included. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SearchAnswer"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["GatewayForbidden"];
            404: components["responses"]["Error404"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    getSettings: {
        parameters: {
            query?: {
                projectId?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The overrides and the effective tunables. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Settings"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["GatewayForbidden"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    putSettings: {
        parameters: {
            query?: {
                projectId?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "softThreshold": 0.5,
                 *       "summaryMaxTokens": 800
                 *     }
                 */
                "application/json": components["schemas"]["SettingsInput"];
            };
        };
        responses: {
            /** @description The overrides and the effective tunables. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Settings"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["GatewayForbidden"];
            413: components["responses"]["Error413"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    listInbox: {
        parameters: {
            query?: {
                processId?: string;
                status?: "OPEN" | "ACCEPTED" | "DECLINED";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The items. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InboxList"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["GatewayForbidden"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    answerInboxItem: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                itemId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "accepted": true
                 *     }
                 */
                "application/json": components["schemas"]["AnswerInput"];
            };
        };
        responses: {
            /** @description The answered item. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InboxItemAnswer"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["GatewayForbidden"];
            404: components["responses"]["Error404"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
        };
    };
    localListEvents: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The key's tenant's events, oldest first, of the newest 1,000 kept. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["LocalEvents"];
                };
            };
            401: components["responses"]["Error401"];
            500: components["responses"]["Error500"];
        };
    };
    localPutEvents: {
        parameters: {
            query?: never;
            header: {
                /** @description The EventBridge operation. */
                "X-Amz-Target": "AWSEvents.PutEvents";
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "Entries": [
                 *         {
                 *           "Source": "vancetope.plan",
                 *           "DetailType": "PlanCompleted",
                 *           "Detail": "{\"tenantId\":\"local\",\"processId\":\"p-1\",\"planId\":\"plan-1\",\"topicLabel\":\"migration\",\"completedAt\":\"2026-05-01T11:00:00Z\"}"
                 *         }
                 *       ]
                 *     }
                 */
                "application/x-amz-json-1.1": components["schemas"]["PutEventsInput"];
            };
        };
        responses: {
            /** @description Which entries were delivered. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/x-amz-json-1.1": components["schemas"]["PutEventsAnswer"];
                };
            };
            /** @description An unknown target, a body that is not JSON, or not 1 to 10 entries. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AwsJsonError"];
                };
            };
            /** @description No known API key (a bearer token, or the access key id of the SigV4 signature). */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AwsJsonError"];
                };
            };
            /** @description A body past 256 KB (EventBridge's own limit), refused before it is read whole. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AwsJsonError"];
                };
            };
            500: components["responses"]["Error500"];
        };
    };
}
