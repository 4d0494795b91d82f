/**
 * Log adapters: Powertools Logger (one JSON line per entry with level, service, timestamp and, in
 * Lambda, the request id and cold-start flag; POWERTOOLS_LOG_LEVEL filters), or silence for tests.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { SERVICE_NAME } from "../domain/service.js";
import type { Log } from "../ports/logger.js";

export function createPowertoolsLog(serviceName: string = SERVICE_NAME, logger: Logger = new Logger({ serviceName })): Log {
  return {
    info: (message, fields) => (fields ? logger.info(message, fields) : logger.info(message)),
    warn: (message, fields) => (fields ? logger.warn(message, fields) : logger.warn(message)),
    error: (message, fields) => (fields ? logger.error(message, fields) : logger.error(message)),
  };
}

export const silentLog: Log = { info: () => {}, warn: () => {}, error: () => {} };
