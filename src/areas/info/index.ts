/** `GET /info`: the protocol version, and the server's name, version and areas in attributes. */
import { PROTOCOL_VERSION, SERVER_NAME, SERVER_VERSION } from '../../config.js';
import { Attributes, attributesOf } from '../../protocol/common.js';
import { recordReply } from '../../protocol/reply.js';
import { message, t } from '../../protocol/schema.js';
import type { Area } from '../area.js';

export const GetInfoResponse = message('GetInfoResponse', {
  protocolVersion: t.string,
  attributes: t.msg(() => Attributes),
});

export const infoArea: Area = {
  name: 'info',
  migrations: [],
  routes({ areaNames }) {
    const areas = areaNames.filter((name) => name !== 'info');
    const info = {
      protocolVersion: PROTOCOL_VERSION,
      attributes: attributesOf({ name: [SERVER_NAME], version: [SERVER_VERSION], areas }),
    };
    return [{ method: 'GET', path: '/info', handle: async () => recordReply(GetInfoResponse, info) }];
  },
  commands() {},
};
