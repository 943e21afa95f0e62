-- description: One row per P-Chain transaction of the configured addresses and L1 validation ids, of every type or of the configured ones (primary.txTypes).
-- unique: tx_hash
-- not_null: network, tx_type, block_timestamp, block_number, block_hash, tracked_addresses
-- column: tx_hash: the transaction's id
-- column: network: mainnet or fuji
-- column: tx_type: the transaction type, as the API gives it (BaseTx, AddPermissionlessDelegatorTx, ConvertSubnetToL1Tx, …)
-- column: block_timestamp: time of the block it is in
-- column: block_number: height of the block it is in
-- column: block_hash: id of the block it is in
-- column: memo: the transaction's memo
-- column: source_chain: the chain an ImportTx imports from
-- column: destination_chain: the chain an ExportTx exports to
-- column: node_id: the validator a staking or L1 transaction is about
-- column: subnet_id: the subnet (or L1) a transaction is about
-- column: started_at: start of a staking period
-- column: ended_at: end of a staking period
-- column: delegation_fee_percent: a validator's delegation fee, in percent
-- column: estimated_reward_navax: the expected reward of a staking transaction, in nAVAX
-- column: reward_tx_hash: the RewardValidatorTx that paid a staking transaction
-- column: reward_addresses: where the reward of a staking transaction goes
-- column: staking_tx_hash: the staking transaction a RewardValidatorTx pays for
-- column: value_navax: AVAX moved by the transaction, in nAVAX (0 when none)
-- column: amount_burned_navax: fees burned, in nAVAX (0 when none)
-- column: amount_staked_navax: AVAX staked, in nAVAX (0 when none)
-- column: amount_l1_validator_balance_burned_navax: AVAX burned from L1 validator balances, in nAVAX (0 when none)
-- column: l1_validator_manager_blockchain_id: of a ConvertSubnetToL1Tx: the chain of the validator manager contract
-- column: l1_validator_manager_address: of a ConvertSubnetToL1Tx: the validator manager contract
-- column: l1_validator_details: the L1 validators the transaction registered or changed (validationId, nodeId, subnetId, weight, remainingBalance, balanceChange in nAVAX, blsCredentials)
-- column: subnet_owner_addresses: of a subnet transaction: the owner addresses
-- column: subnet_owner_threshold: of a subnet transaction: signatures the owners need
-- column: subnet_owner_locktime: of a subnet transaction: the owners' locktime
-- column: bls_public_key: a permissionless validator's BLS public key
-- column: bls_proof_of_possession: a permissionless validator's BLS proof of possession
-- column: created_blockchain_id: of a CreateChainTx: the created chain
-- column: created_chain_name: of a CreateChainTx: the created chain's name
-- column: created_vm_id: of a CreateChainTx: the created chain's VM
-- column: genesis_data: of a CreateChainTx: the created chain's genesis as JSON text
-- column: consumed_utxos: the UTXOs it spent, as the API gives them
-- column: emitted_utxos: the UTXOs it created, as the API gives them
-- column: tracked_addresses: the configured addresses whose listing holds the transaction (empty when only an L1 validation's does)
-- column: extracted_at: when avalake read this version
with source as not materialized (
    -- Note: partitions read by L1 validation id carry no address, so a lake fed by those alone has
    -- no address column: the empty first branch declares it.
    select null::varchar as address
    where false
    union all by name
    select * from {{ lake('p_chain_transactions') }}
),

newest as (
    select * from {{ newest('source', 'txHash') }}
),

tracked as (
    select
        txHash,
        coalesce(
            list(distinct address order by address) filter (where address is not null),
            []
        ) as tracked_addresses
    from source
    group by txHash
),

final as (
    select
        newest.txHash as tx_hash,
        network,
        txType as tx_type,
        blockTimestamp as block_timestamp,
        blockNumber as block_number,
        blockHash as block_hash,
        memo,
        sourceChain as source_chain,
        destinationChain as destination_chain,
        nodeId as node_id,
        subnetId as subnet_id,
        startTimestamp as started_at,
        endTimestamp as ended_at,
        cast(delegationFeePercent as decimal(9, 4)) as delegation_fee_percent,
        estimatedReward as estimated_reward_navax,
        rewardTxHash as reward_tx_hash,
        rewardAddresses as reward_addresses,
        stakingTxHash as staking_tx_hash,
        coalesce(list_sum([a.amount for a in "value"]), 0) as value_navax,
        coalesce(list_sum([a.amount for a in amountBurned]), 0) as amount_burned_navax,
        coalesce(list_sum([a.amount for a in amountStaked]), 0) as amount_staked_navax,
        coalesce(list_sum([a.amount for a in amountL1ValidatorBalanceBurned]), 0) as amount_l1_validator_balance_burned_navax,
        l1ValidatorManagerDetails.blockchainId as l1_validator_manager_blockchain_id,
        l1ValidatorManagerDetails.contractAddress as l1_validator_manager_address,
        l1ValidatorDetails as l1_validator_details,
        subnetOwnershipInfo.addresses as subnet_owner_addresses,
        subnetOwnershipInfo.threshold as subnet_owner_threshold,
        subnetOwnershipInfo.locktime as subnet_owner_locktime,
        blsCredentials.publicKey as bls_public_key,
        blsCredentials.proofOfPossession as bls_proof_of_possession,
        blockchainId as created_blockchain_id,
        blockchainInfo.chainName as created_chain_name,
        blockchainInfo.vmId as created_vm_id,
        blockchainInfo.genesisData as genesis_data,
        consumedUtxos as consumed_utxos,
        emittedUtxos as emitted_utxos,
        tracked.tracked_addresses,
        newest._extracted_at as extracted_at
    from newest
    inner join tracked
        on newest.txHash = tracked.txHash
)

select * from final
