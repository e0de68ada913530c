import { Attributes, type AttributesRecord } from '../../protocol/common.js';
import { searchResponse } from '../../protocol/reply.js';
import { message, t } from '../../protocol/schema.js';

export const Peer = message('Peer', {
  url: t.required(t.string),
  attributes: t.msg(() => Attributes),
});

export const ListPeersRequest = message('ListPeersRequest', { pageSize: t.int32, pageToken: t.string });
export const ListPeersResponse = searchResponse('ListPeersResponse', 'peers', Peer);

export const AnnouncePeerRequest = message('AnnouncePeerRequest', { peer: t.required(t.msg(() => Peer)) });
export const AnnouncePeerResponse = message('AnnouncePeerResponse', {
  success: t.bool,
  attributes: t.msg(() => Attributes),
});

export interface PeerRecord {
  url: string;
  attributes?: AttributesRecord;
}

export interface AnnouncePeerBody {
  peer: { url: string; attributes?: AttributesRecord };
}
