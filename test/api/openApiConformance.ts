// SPDX-License-Identifier: GPL-3.0-or-later
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { HEADERS } from '@visage-avatar/client/api';

interface Operation {
  operationId: string;
  responses: Record<
    string,
    { content?: Record<string, unknown>; headers?: Record<string, unknown> }
  >;
}

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
}

const DOC_ID = 'urn:visage:openapi';

/** JSON pointer escaping (RFC 6901) of one path segment. */
const pointer = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');

/**
 * Holds real HTTP answers to the OpenAPI document: each answer is matched to its operation
 * (method and path template) and its status (or `default`), and its JSON body is validated
 * with a JSON Schema 2020-12 validator against the schema the document declares for it.
 */
export class OpenApiConformance {
  readonly checked = new Map<string, Set<number>>();
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(readonly doc: OpenApiDocument) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(this.ajv);
    this.ajv.addSchema(doc as object, DOC_ID);
  }

  /** Validates `res` as the answer of `method template`; returns the parsed body. */
  async check(method: string, template: string, res: Response): Promise<unknown> {
    const op = this.doc.paths[template]?.[method.toLowerCase()];
    if (!op) throw new Error(`the document has no operation ${method} ${template}`);
    const status = String(res.status);
    const declared = op.responses[status] ? status : 'default';
    const response = op.responses[declared];
    if (!response) throw new Error(`${op.operationId} declares no response ${status}`);
    if (declared === 'default' && res.status < 400) {
      throw new Error(`${op.operationId} answered ${status}, which the document does not declare`);
    }
    for (const header of Object.keys(response.headers ?? {})) {
      if (!res.headers.has(header)) {
        throw new Error(`${op.operationId} ${status}: header ${header} is missing`);
      }
    }
    if (!res.headers.get(HEADERS.requestId)?.startsWith('req_')) {
      throw new Error(`${op.operationId} ${status}: no request id`);
    }
    const binaryType = Object.keys(response.content ?? {}).find((t) => t !== 'application/json');
    if (binaryType && !response.content?.['application/json']) {
      // A declared non-JSON body (an image): the type must match and the body must be there.
      if (res.headers.get('content-type') !== binaryType) {
        throw new Error(`${op.operationId} ${status}: not ${binaryType}`);
      }
      if ((await res.arrayBuffer()).byteLength === 0) {
        throw new Error(`${op.operationId} ${status}: empty ${binaryType} body`);
      }
      this.record(op.operationId, res.status);
      return undefined;
    }
    const text = await res.text();
    let body: unknown = undefined;
    if (response.content?.['application/json']) {
      if (!(res.headers.get('content-type') ?? '').startsWith('application/json')) {
        throw new Error(`${op.operationId} ${status}: not JSON`);
      }
      body = JSON.parse(text);
      const ref = [
        '#/paths',
        pointer(template),
        method.toLowerCase(),
        'responses',
        declared,
        'content',
        pointer('application/json'),
        'schema',
      ].join('/');
      const validate = this.validator(`${DOC_ID}${ref}`);
      if (!validate(body)) {
        throw new Error(
          `${op.operationId} ${status} does not match the document: ${this.ajv.errorsText(validate.errors)}\n${text}`,
        );
      }
    } else if (text.length > 0) {
      throw new Error(`${op.operationId} ${status}: the document declares no body, got ${text}`);
    }
    this.record(op.operationId, res.status);
    return body;
  }

  private record(operationId: string, status: number): void {
    let statuses = this.checked.get(operationId);
    if (!statuses) this.checked.set(operationId, (statuses = new Set()));
    statuses.add(status);
  }

  private validator(ref: string): ValidateFunction {
    let v = this.compiled.get(ref);
    if (!v) this.compiled.set(ref, (v = this.ajv.compile({ $ref: ref })));
    return v;
  }
}
