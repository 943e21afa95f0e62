-- description: Validators of the primary network and configured subnets, one row per validator per snapshot.
-- unique: subnet, node_id, snapshot_at
-- incremental: true
-- not_null: weight, started_at
-- column: subnet: primary, or the subnet id
-- column: network: mainnet or fuji
-- column: node_id: the validator's node id
-- column: tx_id: the transaction that added the validator (null for an L1 validator)
-- column: validation_id: an L1 validator's validation id (null on the primary network and permissioned subnets)
-- column: started_at: start of the validation (UTC; for an L1 validator, when it was registered)
-- column: ends_at: end of the validation (UTC; null for an L1 validator, which has none)
-- column: weight: stake (primary network, in nAVAX) or weight (subnet)
-- column: potential_reward_navax: the reward the validation earns if it completes, in nAVAX (primary network only; null elsewhere)
-- column: delegation_fee_percent: the fee it takes on delegations, in percent (2.0 = 2 %; primary network only, null elsewhere)
-- column: uptime_percent: its uptime as the queried node observed it, in percent 0–100 (null where the node does not report it: subnets and L1s)
-- column: is_connected: whether the queried node is connected to it (null where the node does not report it: subnets and L1s)
-- column: delegator_count: how many delegations it has now (primary network only; null elsewhere)
-- column: delegator_weight_navax: the stake delegated to it now, in nAVAX (primary network only; null elsewhere)
-- column: bls_public_key: its BLS public key (null when it registered none)
-- column: l1_balance_navax: an L1 validator's remaining balance for its fees, in nAVAX (null for other validators)
-- column: snapshot_at: when avalake observed the validator set (one time per run, UTC)
with source as not materialized (
    select * from {{ lake('validators') }}
),

final as (
    select
        subnet,
        network,
        nodeID as node_id,
        txID as tx_id,
        validationID as validation_id,
        startTime as started_at,
        endTime as ends_at,
        weight,
        potentialReward as potential_reward_navax,
        delegationFee as delegation_fee_percent,
        uptime as uptime_percent,
        connected as is_connected,
        delegatorCount as delegator_count,
        delegatorWeight as delegator_weight_navax,
        coalesce(signer.publicKey, publicKey) as bls_public_key,
        balance as l1_balance_navax,
        _snapshot_at as snapshot_at
    from source
)

select * from final
