package com.retrysafe.orders.overload;

import java.util.OptionalLong;

/**
 * The owner of a bearer token that has been verified before, found without verifying it again (a
 * look-up of the exact token string). The door uses it to count a request against its owner's
 * share before the request takes one of the door's places: one owner's flood is then turned away
 * without crowding out the others. A token not seen before has no owner here; it is counted once
 * it is verified, further in.
 */
public interface VerifiedOwners {

    /** @param bearerToken the token as sent, after {@code Bearer } */
    OptionalLong ownerOf(String bearerToken);
}
